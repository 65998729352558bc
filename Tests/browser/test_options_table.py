"""The README's options table says what `warmfeed serve --help` says.

Each default is stated once, in the configuration types, and the command's
options take theirs from there (`Sources/WarmfeedCLI/FeedOptions.swift`);
the help prints them. The README's table is written by hand, so this test
holds it to the help: the same options, and where the table gives a value
in backticks, the value the help gives. Defaults the table names in words
("cores", "host name", "none") are checked for what they mean: "cores" is
the cores the process can use, and a second test reads the help under
`taskset -c 0`.
"""
import os
import re
import subprocess

from conftest import ROOT, WARMFEED_BIN


def help_defaults() -> dict[str, str | None]:
    """Each `--option` of `warmfeed serve --help` and its `(default: …)` (or
    `(values: …; default: …)` for a choice), or None."""
    text = subprocess.run([WARMFEED_BIN, "serve", "--help"], capture_output=True, text=True, timeout=60, check=True).stdout
    options = text.split("OPTIONS:", 1)[1]
    found: dict[str, str | None] = {}
    # An option's entry starts on a line of its own with two spaces and its name.
    for entry in re.split(r"\n(?=  --)", options):
        name = re.match(r"\s*(--[a-z0-9-]+)", entry)
        if not name:
            continue
        flat = " ".join(entry.split())
        default = re.search(r"(?:\(|; )default: ([^)]*)\)", flat)
        found[name.group(1)] = default.group(1).strip() if default else None
    return found


def readme_rows() -> dict[str, str]:
    """Each option of the README's table and its default cell."""
    rows: dict[str, str] = {}
    for line in (ROOT / "README.md").read_text().splitlines():
        if not line.startswith("| `--"):
            continue
        cells = [cell.strip() for cell in line.strip("|").split(" | ")]
        names = re.findall(r"`(--[a-z0-9-]+)`", cells[0])
        values = re.findall(r"`([^`]*)`", cells[1]) if "`" in cells[1] else [cells[1]] * len(names)
        if len(values) != len(names):
            values = [cells[1]] * len(names)
        for name, value in zip(names, values):
            rows[name] = value
    return rows


def test_every_option_is_in_the_table_and_every_default_agrees_with_the_help():
    helped = help_defaults()
    table = readme_rows()
    helped.pop("--help", None)
    helped.pop("--version", None)
    assert len(helped) > 20, helped
    assert sorted(table) == sorted(helped), (
        f"in the help only: {sorted(set(helped) - set(table))}; in the README only: {sorted(set(table) - set(helped))}")
    # "cores": the cores this process may use (its affinity; the server counts its CPU quota too, and so
    # would differ under one), which the server started from here inherits.
    cores = str(len(os.sched_getaffinity(0)))
    for name, written in table.items():
        shown = helped[name]
        if written == "cores":
            assert shown == cores, (name, shown)
        elif written == "none":
            assert shown is None, (name, shown)
        elif written == "host name" or written.startswith(("DATA/", "sqlite:DATA", "http://HOST")):
            # Derived from another option or the machine: the help says so in words, or says nothing.
            assert shown is None or not shown[0].isdigit(), (name, shown)
        else:
            assert shown == written, f"{name}: the README says {written!r}, the help {shown!r}"


def test_the_threads_default_follows_the_cores_the_process_can_use():
    """Under `taskset -c 0` the help's default for --threads is 1, whatever the machine has online."""
    text = subprocess.run(["taskset", "-c", "0", WARMFEED_BIN, "serve", "--help"], capture_output=True, text=True,
                          timeout=60, check=True).stdout
    entry = " ".join(text.split("--threads", 1)[1].split("\n  --", 1)[0].split())
    assert "(default: 1)" in entry, entry
