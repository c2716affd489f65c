"""No-op pyplot: every attribute is a function returning a no-op object."""
class _Noop:
    def __call__(self, *a, **k):
        return _Noop()
    def __getattr__(self, name):
        return _Noop()
    def __getitem__(self, key):
        return _Noop()
    def __iter__(self):
        return iter([_Noop(), _Noop()])
def __getattr__(name):
    return _Noop()
