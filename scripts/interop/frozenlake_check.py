"""graftrl's frozenlake (map: 4x4 or 8x8, slip_mode: gymnasium) against gymnasium's FrozenLake-v1.

Usage: frozenlake_check.py GRAFTRL_LAKE_JSON

GRAFTRL_LAKE_JSON is what `go test ./envs/frozenlake -run TestGymnasiumExport` writes with
GRAFTRL_INTEROP_OUT set: graftrl's transition distribution P[s][a] (outcomes merged by next
state; TestGymnasiumTransitionsMatchSteps checks it against the env's own steps) and its
expert's value-iteration success probability from the start at a few step caps.

Checks, each printing PASS or FAIL with its numbers (exit status 1 on any FAIL):
  1. the terminal states (holes and goal) are the same;
  2. for every other state and action, the outcomes of gymnasium's
     gym.make('FrozenLake-v1', map_name=..., is_slippery=True).unwrapped.P, merged by next
     state, are graftrl's: the same next states and terminal flags, the same rewards (1 on
     reaching the goal, else 0), probabilities equal to 1e-12;
  3. the optimal success probability from the start within H steps, by finite-horizon value
     iteration on gymnasium's P, equals graftrl's expert's to 1e-9, for each H exported.
It also prints gymnasium's infinite-horizon optimum for the record.
"""

import json
import sys

import gymnasium as gym
import numpy as np

from checks import finish, report

PROB_TOL = 1e-12
VALUE_TOL = 1e-9

def merged(outcomes):
    """{next state: [probability, reward, done]} of a list of (p, next, reward, done)."""
    out = {}
    for p, nxt, r, done in outcomes:
        if nxt in out:
            o = out[nxt]
            if o[1] != r or o[2] != done:
                raise ValueError(f"outcomes to {nxt} disagree on reward or end: {outcomes}")
            o[0] += p
        else:
            out[nxt] = [p, float(r), bool(done)]
    return out


def value_iteration(P, n_states, horizon):
    """V_H(s): the largest probability of reaching the goal within `horizon` steps, where a step's
    reward is 1 on reaching the goal and terminal outcomes end the sum. horizon None iterates to
    convergence (the infinite-horizon optimum)."""
    v = np.zeros(n_states)
    h = 0
    while True:
        new = np.array([max(sum(p * (r + (0.0 if done else v[nxt])) for p, nxt, r, done in P[s][a]) for a in P[s])
                        for s in range(n_states)])
        h += 1
        if horizon is not None and h == horizon:
            return new
        if horizon is None and np.max(np.abs(new - v)) < 1e-15:
            return new
        v = new


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: frozenlake_check.py GRAFTRL_LAKE_JSON")
    with open(sys.argv[1]) as f:
        ours = json.load(f)
    name = ours["map"]
    env = gym.make("FrozenLake-v1", map_name=name, is_slippery=True)
    P = env.unwrapped.P
    n = env.unwrapped.observation_space.n
    desc = ["".join(c.decode() for c in row) for row in env.unwrapped.desc]
    print(f"INFO gymnasium {gym.__version__} FrozenLake-v1 map_name={name} is_slippery=True: {' '.join(desc)}, "
          f"{n} states, step cap {env.spec.max_episode_steps}")
    report(n == ours["size"] ** 2 and ours["start"] == 0, "states",
           f"{n} states, start 0; graftrl {ours['size']}x{ours['size']}, start {ours['start']}")

    gym_terminal = sorted(s for s in range(n) if desc[s // ours["size"]][s % ours["size"]] in "HG")
    report(gym_terminal == sorted(ours["terminal"]), "terminal states",
           f"gymnasium {gym_terminal}, graftrl {sorted(ours['terminal'])}")
    invalid = ours["invalid"] or []
    report(not invalid, "every move valid", f"graftrl lists {len(invalid)} invalid moves, as gymnasium: none")

    worst, bad, pairs, outcomes = 0.0, [], 0, 0
    for s in range(n):
        if s in gym_terminal:
            continue
        for a in range(4):
            pairs += 1
            g = merged(P[s][a])
            o = merged((t["p"], t["next"], t["reward"], t["done"]) for t in ours["P"][s][a])
            outcomes += len(g)
            if set(g) != set(o):
                bad.append(f"s{s} a{a}: next states gymnasium {sorted(g)}, graftrl {sorted(o)}")
                continue
            for nxt, (p, r, done) in g.items():
                q, r2, done2 = o[nxt]
                worst = max(worst, abs(p - q))
                if abs(p - q) > PROB_TOL or r != r2 or done != done2:
                    bad.append(f"s{s} a{a} -> {nxt}: gymnasium ({p!r}, {r}, {done}), graftrl ({q!r}, {r2}, {done2})")
    report(not bad, "transitions", f"{pairs} (state, action) pairs, {outcomes} outcomes merged by next state: "
           f"next states, rewards and terminal flags equal, largest probability difference {worst:.3g} "
           f"(tolerance {PROB_TOL:g})" + ("; " + "; ".join(bad[:10]) if bad else ""))

    for e in ours["expert"]:
        h, go = e["max_turns"], e["success"]
        gv = value_iteration(P, n, h)[0]
        report(abs(gv - go) <= VALUE_TOL, f"optimal success within {h} steps",
               f"gymnasium value iteration {gv:.15f}, graftrl expert {go:.15f}, difference {abs(gv - go):.3g} "
               f"(tolerance {VALUE_TOL:g})")
    print(f"INFO gymnasium infinite-horizon optimum from the start: {value_iteration(P, n, None)[0]:.12f}")
    finish("frozenlake check")


if __name__ == "__main__":
    main()
