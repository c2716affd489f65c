"""No-op matplotlib stand-in (the survey machine has none)."""
def use(*a, **k):
    pass
