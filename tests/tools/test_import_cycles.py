"""No import cycles between the project's modules.

pyproject's ``acyclic_siblings`` contract (``lint-imports``) checks the siblings inside every package, and the
``layers`` contract the order of the layers; this test checks the whole graph at once, module by module, so a
cycle through a module outside the layers (``sim.native``, ``sim.errors``) is caught too. Every import counts,
those inside functions and under ``TYPE_CHECKING`` included (grimp reads them all), and so does a package's
``__init__`` importing its own modules (``sim.des`` imports ``engine`` and ``profile``): a module that imports a
package, then something that package's ``__init__`` imports importing that module back, is a cycle too.
"""

from __future__ import annotations

import grimp

PACKAGES = ("models", "sim", "calibration", "app")


def import_graph() -> dict[str, set[str]]:
    graph = grimp.build_graph(*PACKAGES)
    return {m: {t for t in graph.find_modules_directly_imported_by(m) if t in graph.modules}
            for m in sorted(graph.modules)}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in edges:
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return found


def describe(edges: dict[str, set[str]], comp: list[str]) -> str:
    """One cycle through the component, as ``a -> b -> ... -> a``."""
    members = set(comp)
    path = [comp[0]]
    seen = {comp[0]}
    while True:
        nxt = sorted(edges[path[-1]] & members)
        back = [n for n in nxt if n == comp[0]]
        if back and len(path) > 1:
            return " -> ".join([*path, comp[0]])
        fresh = [n for n in nxt if n not in seen]
        if not fresh:
            return " <-> ".join(comp)
        path.append(fresh[0])
        seen.add(fresh[0])


def test_the_tarjan_search_finds_a_known_cycle() -> None:
    """The search itself: a -> b -> c -> a is one cycle, d hangs off it, e imports itself only through d."""
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"d"}}
    assert cycles(edges) == [["a", "b", "c"]]
    assert describe(edges, ["a", "b", "c"]) == "a -> b -> c -> a"
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles() -> None:
    edges = import_graph()
    assert "sim.des.engine" in edges and "calibration.evaluate" in edges, "the graph misses the project's modules"
    found = cycles(edges)
    assert not found, "import cycles:\n" + "\n".join(describe(edges, comp) for comp in found)


def test_calibration_evaluate_and_fit_do_not_import_each_other() -> None:
    """The issue's named cycle, kept fixed: evaluate and fit in one direction at most."""
    edges = import_graph()
    assert not ("calibration.fit" in edges["calibration.evaluate"] and "calibration.evaluate" in edges["calibration.fit"])
