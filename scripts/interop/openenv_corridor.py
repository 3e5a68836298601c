"""A small environment written against OpenEnv's own server framework, for graftrl's client.

Usage: openenv_corridor.py LOG

Serves it with OpenEnv's create_app and uvicorn on a loopback port the kernel picks (at most 8
sessions), and prints "listening on PORT" once the socket is bound. The task:
a corridor of cells 0..LENGTH-1; the task seed fixes LENGTH (3 to 6), the start and the goal
(different cells). The observation's `text` is "pos P goal G"; the actions are {"message": "left"}
and {"message": "right"}; a move off either end stays in place; any other message is answered
"invalid pos P goal G" (no move). Reaching the goal ends the episode with reward 1.0; every other
step has reward 0.0. The environment does not cap the steps (graftrl's client does, by its
max_turns).

Each finished step is appended to LOG as a JSON line {"seed", "step", "action", "pos", "reward",
"done"}, so that a check can compare what graftrl reports with what the server saw.
"""

import json
import random
import socket
import sys
import threading
from typing import Any, Optional
from uuid import uuid4

import uvicorn
from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State
from pydantic import Field


class CorridorAction(Action):
    """An action: the word to play, left or right."""

    message: str = Field(..., description="left or right")


class CorridorObservation(Observation):
    """An observation: the agent's cell and the goal's, as words."""

    text: str = Field(default="", description="pos P goal G")


LOG_LOCK = threading.Lock()
LOG_PATH = None


def layout(seed):
    """(length, start, goal) of a task seed."""
    rng = random.Random(seed)
    length = rng.randint(3, 6)
    start = rng.randrange(length)
    goal = rng.choice([c for c in range(length) if c != start])
    return length, start, goal


class CorridorEnvironment(Environment):
    """The corridor task, one instance per WebSocket session."""

    SUPPORTS_CONCURRENT_SESSIONS: bool = True

    def __init__(self):
        self._state = State(episode_id=str(uuid4()), step_count=0)
        self._seed = 0
        self._length, self._pos, self._goal = layout(0)

    def _text(self):
        return f"pos {self._pos} goal {self._goal}"

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              **kwargs: Any) -> CorridorObservation:
        self._seed = seed if seed is not None else random.randrange(1 << 31)
        self._length, self._pos, self._goal = layout(self._seed)
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return CorridorObservation(text=self._text(), done=False, reward=None)

    def step(self, action: CorridorAction, timeout_s=None, **kwargs: Any) -> CorridorObservation:
        self._state.step_count += 1
        word = action.message.strip()
        prefix = ""
        if word == "left":
            self._pos = max(0, self._pos - 1)
        elif word == "right":
            self._pos = min(self._length - 1, self._pos + 1)
        else:
            prefix = "invalid "
        done = self._pos == self._goal
        reward = 1.0 if done else 0.0
        if LOG_PATH:
            line = json.dumps({"seed": self._seed, "step": self._state.step_count, "action": word,
                               "pos": self._pos, "reward": reward, "done": done})
            with LOG_LOCK, open(LOG_PATH, "a") as f:
                f.write(line + "\n")
        return CorridorObservation(text=prefix + self._text(), done=done, reward=reward)

    @property
    def state(self) -> State:
        return self._state


app = create_app(CorridorEnvironment, CorridorAction, CorridorObservation,
                 env_name="corridor", max_concurrent_envs=8)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: openenv_corridor.py LOG")
    LOG_PATH = sys.argv[1]
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    print(f"listening on {sock.getsockname()[1]}", flush=True)
    uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])
