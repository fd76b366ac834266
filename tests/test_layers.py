"""Layer rules of the package, enforced with import-linter (contracts in pyproject.toml) and grimp:
models never import integrators, results, sweep, partition or kinds; integrators import nothing above
them; config imports no models, partition or kinds; the generic layers know no particular kind; and
no import cycle exists anywhere in hpcrail (between packages or between any two modules)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_import_linter_contracts_are_kept():
    code = ("import sys; from importlinter.cli import lint_imports; "
            "sys.exit(lint_imports(config_filename='pyproject.toml', no_cache=True, no_logo=True))")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "7 kept, 0 broken" in r.stdout, r.stdout


def test_generic_layer_contract_covers_every_registered_kind():
    """The contract keeping the generic layers (and ``hpcrail.commands``) away from particular kinds lists every
    kind of the registry, and the sibling-kind contract covers every kind but the LTD kind it protects."""
    import tomllib

    from hpcrail import kinds

    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    generic = next(c for c in contracts if c["name"].startswith("Generic layers"))
    assert sorted(generic["forbidden_modules"]) == sorted(f"hpcrail.kinds.{k}" for k in kinds.names())
    assert "hpcrail.commands" in generic["source_modules"]
    sibling = next(c for c in contracts if c["name"].startswith("Sibling kinds"))
    assert sorted(sibling["source_modules"]) == sorted(f"hpcrail.kinds.{k}" for k in kinds.names() if k != "ltd")


def test_no_import_cycle_between_any_two_modules():
    """Every strongly connected component of the module import graph (imports inside functions
    included) is a single module."""
    import grimp

    g = grimp.build_graph("hpcrail", include_external_packages=False)
    mods = sorted(g.modules)
    index = {m: i for i, m in enumerate(mods)}
    edges = [[index[b] for b in g.find_modules_directly_imported_by(a)] for a in mods]
    # Tarjan's algorithm (iterative)
    counter, stack, on, low, num, sccs = [0], [], set(), {}, {}, []
    for root in range(len(mods)):
        if root in num:
            continue
        work = [(root, 0)]
        while work:
            v, i = work.pop()
            if i == 0:
                num[v] = low[v] = counter[0]
                counter[0] += 1
                stack.append(v)
                on.add(v)
            recurse = False
            for k in range(i, len(edges[v])):
                w = edges[v][k]
                if w not in num:
                    work.append((v, k + 1))
                    work.append((w, 0))
                    recurse = True
                    break
                if w in on:
                    low[v] = min(low[v], num[w])
            if recurse:
                continue
            if low[v] == num[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(mods[w])
                    if w == v:
                        break
                sccs.append(comp)
            if work:
                u = work[-1][0]
                low[u] = min(low[u], low[v])
    cycles = [sorted(c) for c in sccs if len(c) > 1]
    assert not cycles, cycles
