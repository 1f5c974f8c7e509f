"""``kafkafmt scenario``: run the seeds' upgrade scenarios and print the computed compatibility matrices."""
from __future__ import annotations

import json
import sys

from . import LazyChoices, add_format


def _matrix_names() -> list[str]:
    from ..scenarios.matrices import MATRICES
    return sorted(MATRICES)


def register(sub) -> None:
    p = sub.add_parser("scenario", help="run upgrade scenarios and compatibility matrices (seeds 000, 002-004)",
                       description="Run a cluster scenario (brokers, producers, consumers on real bytes, a log per "
                                   "replica in a temporary directory, a simulated clock) and print what every "
                                   "hop did; or print a seed's compatibility matrix computed cell by cell.")
    ss = p.add_subparsers(dest="scenario_command", metavar="ACTION")
    run_p = ss.add_parser("run", help="run a scenario file or a shipped scenario",
                          description="Run a scenario (a YAML/JSON file, or the name of a shipped one: see "
                                      "'kafkafmt scenario list').  Exit status 1 if an expectation fails or a "
                                      "broker refuses to start with the settings a step gives it (as its release "
                                      "would: the run stops there, the steps after it are listed as not run).  With "
                                      "--live, also run it on real brokers and clients of the releases it names "
                                      "(a version is a release line; its last patch release runs) and print, "
                                      "step by step, the model's outcome beside the release's; exit status 1 on "
                                      "any disagreement, 2 when the live runner (the test rig of a source "
                                      "checkout) is not installed or a step cannot run live.")
    run_p.add_argument("scenario", help="file path or shipped scenario name")
    run_p.add_argument("--format", choices=("table", "json", "markdown"), default="table")
    run_p.add_argument("--measured", action="store_true",
                       help="include measured timings (json only; they vary from run to run)")
    run_p.add_argument("--live", action="store_true",
                       help="run the scenario on real brokers and clients too and compare step by step "
                            "(needs the test rig of a source checkout: pip install -e conformance/)")
    run_p.set_defaults(func=_run)
    list_p = ss.add_parser("list", help="list the shipped scenarios and matrices",
                           description="List the scenarios shipped with kafkafmt and the computed matrices.")
    add_format(list_p, json_help="{scenarios: [{name, title}], matrices: [names]}")
    list_p.set_defaults(func=_list)
    m_p = ss.add_parser("matrix", help="print a computed compatibility matrix",
                        description="Print seed 002's producer or consumer matrix or seed 003's mode × format "
                                    "table: the seed's cell, the computed cell, which seed reading it matches, "
                                    "and Kafka 3.9.2's behaviour.")
    m_p.add_argument("name", choices=LazyChoices(_matrix_names), metavar="NAME", help="the matrix: %(choices)s")
    m_p.add_argument("--format", choices=("table", "json", "markdown"), default="table")
    m_p.set_defaults(func=_matrix)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def _run(args) -> int:
    from ..scenarios import load_scenario, render, run_scenario
    if args.live:
        return _run_live(args)
    result = run_scenario(load_scenario(args.scenario), progress=sys.stderr.isatty())
    print(render(result, args.format, with_measured=args.measured))
    return 0 if result.ok else 1


def _run_live(args) -> int:
    """``scenario run --live``: the installed live runner (:mod:`kafkafmt.scenarios.live`), step by step."""
    from ..scenarios import load_scenario
    from ..scenarios.live import LiveRunnerMissing, LiveUnsupported, live_runner, render_rows

    scenario = load_scenario(args.scenario)
    try:
        run = live_runner()
    except LiveRunnerMissing as e:
        print(f"kafkafmt: {e.reason}", file=sys.stderr)
        return 2
    as_json = args.format == "json"
    try:
        report = run(scenario, emit=None if as_json else
                     lambda n, name, rows: print(render_rows(n, name, rows), flush=True))
    except LiveUnsupported as e:
        print(f"kafkafmt: cannot run live: {e.reason}", file=sys.stderr)
        return 2
    if as_json:
        print(json.dumps({"name": scenario.name, **report.to_dict()}, indent=2))
        return 0 if report.ok else 1
    releases = ", ".join(f"{b} {r}" for b, r in report.releases.items())
    if report.not_run:
        print(f"not run live (a broker refused to start at an earlier step): {'; '.join(report.not_run)}")
    proposals = (f"; {len(report.proposals)} row(s) of a seed's proposal no release shipped, beside what the "
                 "release did (not counted)") if report.proposals else ""
    print(f"{len(report.steps)} steps live ({releases}; {report.seconds:.0f} s), "
          f"{len(report.disagreements)} disagreement(s) between the model and the releases{proposals}")
    return 0 if report.ok else 1


def _list(args) -> int:
    from ..scenarios import load_scenario, shipped_scenarios
    from ..scenarios.matrices import MATRICES
    if args.format == "json":
        print(json.dumps({"scenarios": [{"name": n, "title": load_scenario(p).title} for n, p in shipped_scenarios().items()],
                          "matrices": sorted(MATRICES)}, indent=1))
        return 0
    for name, path in shipped_scenarios().items():
        print(f"{name:32s} {load_scenario(path).title}")
    for name in sorted(MATRICES):
        print(f"matrix {name}")
    return 0


def _matrix(args) -> int:
    from ..scenarios.matrices import MATRICES, matrix_table
    if args.format == "json":
        print(json.dumps(MATRICES[args.name](), indent=2, default=str))
        return 0
    cols, rows = matrix_table(args.name)
    if args.format == "markdown":
        print("| " + " | ".join(cols) + " |")
        print("|" + "---|" * len(cols))
        for r in rows:
            print("| " + " | ".join(c.replace("|", "\\|") for c in r) + " |")
        return 0
    w = [max(len(c), *(len(r[i]) for r in rows)) for i, c in enumerate(cols)]
    print("  ".join(c.ljust(w[i]) for i, c in enumerate(cols)).rstrip())
    for r in rows:
        print("  ".join(x.ljust(w[i]) for i, x in enumerate(r)).rstrip())
    return 0
