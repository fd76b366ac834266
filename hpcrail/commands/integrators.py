"""``hpcrail integrators``: the registered integration methods, their aliases and options (the names
``integrator.method`` and ``integrator.options`` accept in a scenario or a sweep)."""
from __future__ import annotations

from rich.table import Table

from hpcrail.cli import app, console

#: below this terminal width the methods are listed one block each (a seven-column table would wrap every cell)
TABLE_WIDTH = 140


@app.command("integrators")
def integrators_command():
    """List the integrators: name, aliases, kind, order, where they run (events, blocks, batch), options
    (default [range]) and source."""
    from hpcrail.integrators import registry

    rows = []
    for name in registry.method_names(include_aliases=False):
        info = registry.get(name)
        spec = registry.spec_of(name)
        kind = ("adaptive" if info.adaptive else "fixed step") + (", implicit" if info.implicit else ", explicit")
        where = ", ".join(w for w, ok in (("events", spec.events), ("blocks", spec.blocks), ("batch", spec.batch))
                          if ok) or "–"
        opts = [f"{k} = {o.default:g} [{o.low:g}, {o.high:g}]" for k, o in sorted(info.options.items())
                if not o.internal]
        rows.append((name, ", ".join(registry.aliases_of(name)), kind, str(info.order), where, opts, info.source))
    if console.width >= TABLE_WIDTH:
        t = Table(title="hpcrail integrators (integrator.method / integrator.options)")
        for col in ("method", "aliases", "kind", "order", "runs on", "options", "source"):
            t.add_column(col, no_wrap=col in ("method", "order"))
        for name, aliases, kind, order, where, opts, source in rows:
            t.add_row(name, aliases, kind, order, where, "\n".join(opts) or "–", source)
        console.print(t)
        return
    # narrow terminals: one block per method, every line readable at 80 columns
    console.print("hpcrail integrators (integrator.method / integrator.options)", style="bold", highlight=False)
    for name, aliases, kind, order, where, opts, source in rows:
        console.print()
        console.print(f"[bold]{name}[/]" + (f"  (also: {aliases})" if aliases else "") + f" — {kind}, order {order}",
                      highlight=False)
        console.print(f"    runs on: {where}", highlight=False, markup=False)
        for o in opts:
            console.print(f"    option {o}", highlight=False, markup=False)
        if source:
            console.print(f"    source: {source}", highlight=False, markup=False)
