"""What the benchmark references (torch_ref.py, jax_ref.py) share: graftrl's query bucketing, its
FLOP count of a train step and the command-line flags that must mean the same on every side.
Framework-free, so that each reference imports it under its own Python."""

import argparse


def query_bucket(n, length):
    """graftrl's policy.queryBucket: 8, 16, 24, 32, 48, 64, 96, 128, ... capped at length."""
    q = 8
    while q < n:
        if q < 32:
            q += 8
        elif q & (q - 1) == 0:
            q += q // 2
        else:
            q += q // 3
    return min(q, length)


def flops_train_step(rows, length, d, layers, d_ff, vocab):
    """Matmul FLOPs of one train step, the formula of graftrl's bench (bench.TrainStepFLOPs):
    forward 2·N·(layers·(4d² + 2·d·d_ff) + d·vocab) + layers·4·rows·length²·d, backward twice
    that (embedding lookups and elementwise work not counted)."""
    n = rows * length
    fwd = 2 * n * (layers * (4 * d * d + 2 * d * d_ff) + d * vocab) + layers * 4 * rows * length * length * d
    return 3 * fwd


def parser(description, threads_help, check_help):
    """The flags graftrl bench and every reference share (the same names and defaults as
    `graftrl bench`), with each reference's own words for --threads and --check."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--d-model", type=int, default=64)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--d-ff", type=int, default=0, help="0 means 4*d_model")
    ap.add_argument("--vocab", type=int, default=64)
    ap.add_argument("--max-len", type=int, default=128)
    ap.add_argument("--batch", type=int, default=16, help="train rows at the quickstart shape (also run at 4x)")
    ap.add_argument("--len", type=int, default=64, help="train sequence length")
    ap.add_argument("--sample-batches", default="1,16,64")
    ap.add_argument("--action-tokens", type=int, default=4, help="ids 4..4+k-1 are the action tokens (0: no mask)")
    ap.add_argument("--reps", type=int, default=21)
    ap.add_argument("--warmup", type=int, default=15, help="untimed train steps before the timed ones")
    ap.add_argument("--threads", type=int, default=0, help=threads_help)
    ap.add_argument("--full-last-layer", action="store_true",
                    help="run the last block at every position (graftrl runs it at action positions only)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--check", metavar="FILE", help=check_help)
    return ap


def parse(ap):
    """Parses the flags and refuses counts below 1."""
    a = ap.parse_args()
    if a.reps < 1 or a.warmup < 1:
        ap.error(f"--reps {a.reps} and --warmup {a.warmup} must both be at least 1")
    return a
