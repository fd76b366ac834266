"""``hpcrail integrators``: the registered integration methods, their aliases and options (the names
``integrator.method`` and ``integrator.options`` accept in a scenario or a sweep)."""
from __future__ import annotations

from rich.table import Table

from hpcrail.cli import app, console


@app.command("integrators")
def integrators_command():
    """List the integrators: name, aliases, kind, order, options (default [range]) and source."""
    from hpcrail.integrators import registry

    t = Table(title="hpcrail integrators (integrator.method / integrator.options)")
    for col in ("method", "aliases", "kind", "order", "runs on", "options", "source"):
        t.add_column(col)
    for name in registry.method_names(include_aliases=False):
        info = registry.get(name)
        spec = registry.spec_of(name)
        kind = ("adaptive" if info.adaptive else "fixed step") + (", implicit" if info.implicit else ", explicit")
        where = ", ".join(w for w, ok in (("events", spec.events), ("blocks", spec.blocks), ("batch", spec.batch))
                          if ok) or "–"
        opts = "\n".join(f"{k} = {o.default:g} [{o.low:g}, {o.high:g}]" for k, o in sorted(info.options.items())
                          if not o.internal)
        t.add_row(name, ", ".join(registry.aliases_of(name)), kind, str(info.order), where, opts or "–",
                  info.source)
    console.print(t)
