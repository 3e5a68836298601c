"""What the interop checks share: PASS/FAIL lines and the exit status."""

import sys

failures = []


def report(ok, name, detail):
    """Prints a check's PASS or FAIL line with its numbers and records a failure."""
    print(("PASS" if ok else "FAIL") + " " + name + ": " + detail)
    if not ok:
        failures.append(name)


def finish(what):
    """Prints the closing line of a check script and exits 1 if any check failed."""
    if failures:
        print(f"{what}: {len(failures)} FAIL: {', '.join(failures)}")
        sys.exit(1)
    print(f"{what}: all PASS")
