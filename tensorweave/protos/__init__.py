"""Protocol buffer messages, wire-compatible with TensorFlow's (package ``tensorweave``)."""
