import urllib  # noqa
import urllib.request  # noqa
xrange = range
