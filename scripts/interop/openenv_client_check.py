"""OpenEnv's own Python client driving `graftrl serve-env`, against graftrl's local episodes.

Usage: openenv_client_check.py EPISODES_JSON ENV=URL [ENV=URL ...]

EPISODES_JSON is what `go test ./envs/openenv -run TestInteropEpisodesExport` writes with
GRAFTRL_INTEROP_OUT set: episodes of every registered env played locally (default options, task
seeds 0 to 3, an episode seed for stochastic envs, actions from the expert, random action words
and a non-word), each reset and step with what the env returned. Each ENV=URL names the
`graftrl serve-env --env ENV` serving it (http://127.0.0.1:PORT).

For every episode, OpenEnv's GenericEnvClient (one WebSocket session per episode) sends
reset(seed=task_seed[, episode_seed=...]) and the recorded actions as {"message": action}.
Checks, each printing PASS or FAIL with its numbers (exit status 1 on any FAIL):
  1. per env, every reply equals the local env's: on reset the observation's text, instruction,
     state_key and info.distance, its metadata the empty object (as OpenEnv's servers send it),
     reward None and done False; on every step the observation's metadata, text, state_key,
     step_reward, outcome, truncated and info (success, invalid_action, distance, extra), the
     StepResult's reward equal to step_reward + outcome (exactly, as
     floats) and its done equal to terminated or truncated; the episode ends where the local
     one ended;
     after the episode, state() reports the number of steps taken and the task seed;
  2. a step with an unknown action key is answered with OpenEnv's VALIDATION_ERROR, raised by
     the client, and the session stays usable.
"""

import json
import sys

from openenv.core.generic_client import GenericEnvClient

from checks import finish, report


def compare(where, got, want, diffs):
    """Appends a difference to diffs unless got equals want exactly (floats included; a bool
    never equals a number)."""
    if got != want or isinstance(got, bool) != isinstance(want, bool):
        diffs.append(f"{where}: got {got!r}, want {want!r}")


def check_episode(client, ep, diffs):
    """Replays one recorded episode on a fresh session; returns the number of replies compared."""
    kwargs = {"seed": ep["task_seed"]}
    if ep["episode_seed"] is not None:
        kwargs["episode_seed"] = ep["episode_seed"]
    tag = f"{ep['env']} task {ep['task_seed']}"
    r = client.reset(**kwargs)
    o = r.observation
    compare(f"{tag} reset text", o.get("text"), ep["text"], diffs)
    compare(f"{tag} reset instruction", o.get("instruction"), ep["instruction"], diffs)
    compare(f"{tag} reset state_key", o.get("state_key"), ep["state_key"], diffs)
    compare(f"{tag} reset distance", o.get("info", {}).get("distance"), ep["distance"], diffs)
    compare(f"{tag} reset metadata", o.get("metadata"), {}, diffs)
    compare(f"{tag} reset reward", r.reward, None, diffs)
    compare(f"{tag} reset done", r.done, False, diffs)
    n = 1
    for i, s in enumerate(ep["steps"]):
        r = client.step({"message": s["action"]})
        o = r.observation
        info = o.get("info", {})
        at = f"{tag} step {i + 1} ({s['action']!r})"
        compare(f"{at} metadata", o.get("metadata"), {}, diffs)
        compare(f"{at} text", o.get("text"), s["text"], diffs)
        compare(f"{at} state_key", o.get("state_key"), s["state_key"], diffs)
        compare(f"{at} step_reward", float(o.get("step_reward")), float(s["step_reward"]), diffs)
        compare(f"{at} outcome", float(o.get("outcome")), float(s["outcome"]), diffs)
        compare(f"{at} truncated", o.get("truncated"), s["truncated"], diffs)
        compare(f"{at} success", info.get("success"), s["success"], diffs)
        compare(f"{at} invalid_action", info.get("invalid_action"), s["invalid_action"], diffs)
        compare(f"{at} distance", info.get("distance"), s["distance"], diffs)
        compare(f"{at} extra", info.get("extra"), s.get("extra"), diffs)
        compare(f"{at} reward", float(r.reward), float(s["step_reward"]) + float(s["outcome"]), diffs)
        compare(f"{at} done", r.done, s["done"] or s["truncated"], diffs)
        n += 1
    state = client.state()
    compare(f"{tag} state step_count", state.get("step_count"), len(ep["steps"]), diffs)
    compare(f"{tag} state task_seed", state.get("task_seed"), ep["task_seed"], diffs)
    return n


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: openenv_client_check.py EPISODES_JSON ENV=URL [ENV=URL ...]")
    episodes = json.load(open(sys.argv[1]))["episodes"]
    urls = dict(a.split("=", 1) for a in sys.argv[2:])
    by_env = {}
    for ep in episodes:
        by_env.setdefault(ep["env"], []).append(ep)
    missing = sorted(set(by_env) - set(urls))
    report(not missing, "every env served", f"{len(by_env)} envs, not served: {missing or 'none'}")
    for name in sorted(by_env):
        if name not in urls:
            continue
        diffs, replies, steps = [], 0, 0
        for ep in by_env[name]:
            # One client, hence one WebSocket session, per episode, as a trainer's parallel
            # episodes have.
            with GenericEnvClient(base_url=urls[name]).sync() as client:
                replies += check_episode(client, ep, diffs)
            steps += len(ep["steps"])
        detail = (f"{len(by_env[name])} episodes, {steps} steps, {replies} replies equal to the local env's"
                  if not diffs else f"{len(diffs)} differences, first: " + "; ".join(diffs[:3]))
        report(not diffs, f"{name} through OpenEnv's client", detail)

    name = sorted(urls)[0]
    with GenericEnvClient(base_url=urls[name]).sync() as client:
        client.reset(seed=0)
        try:
            client.step({"msg": "up"})
            report(False, "unknown action key", "the step was accepted")
        except Exception as e:  # the client raises RuntimeError with the server's message
            text = str(e)
            r = client.step({"message": by_env[name][0]["steps"][0]["action"]})
            ok = "VALIDATION_ERROR" in text and "text" in r.observation
            report(ok, "unknown action key", f"{type(e).__name__}: {text[:160]}; the session then steps on")
    finish("openenv client against graftrl serve-env")


if __name__ == "__main__":
    main()
