"""graftrl's openenv env trained and evaluated against an environment of OpenEnv's own server.

Usage: openenv_corridor_check.py RUN_DIR SERVER_LOG TRAIN_LINES EVAL_JSON

RUN_DIR is the run `graftrl train --config scripts/interop/openenv_corridor.yaml` wrote against
scripts/interop/openenv_corridor.py; SERVER_LOG is the server's log of steps (one JSON line per
step, see openenv_corridor.py), whose first TRAIN_LINES lines were written during the training
and the rest during `graftrl eval --run RUN_DIR --json`, whose output is EVAL_JSON.

Checks, each printing PASS or FAIL with its numbers (exit status 1 on any FAIL):
  1. the run trained all its iterations with no errored episode;
  2. the steps the server executed during training equal the steps graftrl counted: the train
     iterations' env_steps plus, for each periodic evaluation, turns x episodes of its four
     panels (train and held-out, greedy and sampled);
  3. the episodes the server ended with reward 1 during training equal graftrl's successes:
     success x episodes of every train iteration and every evaluation panel;
  4. the same two counts for `graftrl eval` against the same server (no errored episode).
"""

import json
import sys

import yaml

from checks import finish, report

PANELS = [(p, m) for p in ("train", "heldout") for m in ("greedy", "sampled")]


def eval_counts(rec, sizes):
    """(steps, successes, errors) of one evaluation record over its four panels."""
    steps = sum(rec[f"eval/{p}/{m}/turns"] * sizes[p] for p, m in PANELS)
    wins = sum(rec[f"eval/{p}/{m}/success"] * sizes[p] for p, m in PANELS)
    errors = sum(rec[f"eval/{p}/{m}/errors"] for p, m in PANELS)
    return steps, wins, errors


def main():
    if len(sys.argv) != 5:
        sys.exit("usage: openenv_corridor_check.py RUN_DIR SERVER_LOG TRAIN_LINES EVAL_JSON")
    run, log_path, train_lines, eval_path = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    cfg = yaml.safe_load(open(f"{run}/config.yaml"))
    sizes = {"train": cfg["tasks"]["train"], "heldout": cfg["tasks"]["eval"]}
    per_iter = cfg["tasks"]["per_iter"] * cfg["tasks"]["group_size"]
    recs = [json.loads(line) for line in open(f"{run}/metrics.jsonl")]
    train = [r for r in recs if r["type"] == "train"]
    evals = [r for r in recs if r["type"] == "eval"]
    log = [json.loads(line) for line in open(log_path)]
    during, after = log[:train_lines], log[train_lines:]

    errors = sum(r["errors"] for r in train) + sum(eval_counts(r, sizes)[2] for r in evals)
    report(len(train) == cfg["iterations"] and errors == 0, "training against OpenEnv's server",
           f"{len(train)} of {cfg['iterations']} iterations, {len(evals)} evaluations, {errors} errored episodes, "
           f"final greedy success train {evals[-1]['eval/train/greedy/success']:.3f}, "
           f"held-out {evals[-1]['eval/heldout/greedy/success']:.3f}")

    steps = train[-1]["env_steps"] + sum(eval_counts(r, sizes)[0] for r in evals)
    report(steps == len(during), "training steps seen by the server",
           f"server {len(during)}, graftrl {steps:g} ({train[-1]['env_steps']} in training)")
    wins = sum(r["success"] * per_iter for r in train) + sum(eval_counts(r, sizes)[1] for r in evals)
    server_wins = sum(1 for s in during if s["done"] and s["reward"] == 1.0)
    report(abs(wins - server_wins) < 1e-9, "training successes seen by the server",
           f"server {server_wins}, graftrl {wins:g}")

    ev = json.load(open(eval_path))
    steps, wins, errors = eval_counts(ev, sizes)
    server_wins = sum(1 for s in after if s["done"] and s["reward"] == 1.0)
    report(errors == 0 and steps == len(after) and abs(wins - server_wins) < 1e-9, "graftrl eval against the server",
           f"{errors} errored episodes; steps server {len(after)}, graftrl {steps:g}; "
           f"successes server {server_wins}, graftrl {wins:g}; greedy success train "
           f"{ev['eval/train/greedy/success']:.3f}, held-out {ev['eval/heldout/greedy/success']:.3f}")
    finish("openenv env against OpenEnv's server")


if __name__ == "__main__":
    main()
