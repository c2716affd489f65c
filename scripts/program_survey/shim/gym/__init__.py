"""gym (old API) on top of gymnasium: reset() -> obs, step() -> 4-tuple."""
import gymnasium


class _OldApi:
    def __init__(self, env):
        self._env = env
        self.observation_space = env.observation_space
        self.action_space = env.action_space

    @property
    def unwrapped(self):
        return self

    def reset(self):
        return self._env.reset()[0]

    def step(self, a):
        o, r, term, trunc, info = self._env.step(a)
        return o, r, term or trunc, info

    def seed(self, s=None):
        self._env.reset(seed=s)


def make(name):
    return _OldApi(gymnasium.make(name).unwrapped)
