"""Settings of the checked envelopes (``output.envelope_check`` of the train kinds): after a run, the windows
around its largest draft and buff peaks are integrated again from the run's stored states with a reference
setting, and each peak's relative difference is reported (:mod:`hpcrail.results.envelope_check`)."""
from __future__ import annotations

from typing import Literal, Optional

from pydantic import Field

from hpcrail.config.base import Strict


class EnvelopeCheck(Strict):
    """Check of the run's largest in-train force peaks against a reference integration of their windows.

    ``reference: auto`` is, for a run of the BDF family (``bdf``, ``bdf2``, ``ndf``, ``mrbdf2``), variable-order BDF
    (orders 1-5) at ``rtol``/``tighten`` and ``atol``/``tighten`` — a higher-order method that does not share
    BDF2's numerical damping and costs 3.0-3.4× a BDF2 run of trains 2 and 4, where BDF2 at rtol/100 costs
    3.8-4.1× (benchmarks/results/envelope_check.md); for other error-controlled methods the run's own method at those tolerances, for fixed-step ones the run's
    method at ``step_s``/4.  ``same`` is the run's own method in every case; ``rk4`` is classical Runge-Kutta at
    ``reference_step_s``.

    ``span: window`` re-integrates only ``[t_peak - lead_s, t_peak + lag_s]`` from the run's stored sample at the
    window start (overlapping windows once): cheap, but blind to the error carried into the window (on the
    linear30 train it reported 0.07-0.29 % where the run's peaks were 1.1-3.0 % off, tests/test_envelope_check.py).
    ``span: run`` integrates the reference from the run's initial state to the last peak's window end and
    compares each checked coupler's extreme there: it sees the error accumulated before a peak (a lightly damped
    train rings for tens of seconds after a notch change), at the cost of a run at the reference setting.
    ``span: auto`` (default) checks the windows, then re-integrates the worst peak from twice as far back; when its
    difference changes by more than a tenth of ``warn_above`` or grows by more than half, the run carried error
    into the windows and the whole run is checked (:mod:`hpcrail.results.envelope_check`).  A short run, whose
    windows and memory test would integrate half of it or more, is checked over the whole run directly.

    Off in the scenario's defaults (a sweep or ``hpcrail.simulate`` checks when the file or an override says
    ``enabled: true``); ``hpcrail run`` checks unless the file sets ``enabled`` or ``--no-check`` is given.
    """

    enabled: bool = Field(False, description="re-integrate the largest peaks after the run; `hpcrail run` turns "
                          "it on unless the file sets it or --no-check is given (span auto costs 5-10 % of a "
                          "train 2/4 run, the whole-run fallback and short runs 1.4-2.5 times, docs/performance.md; "
                          "sweeps and the Python API check only when asked)")
    peaks: int = Field(3, ge=1, le=50, description="largest draft peaks and largest buff peaks checked (each at a "
                       "distinct time)")
    span: Literal["auto", "run", "window"] = Field(
        "auto", description="auto: the windows, then the worst peak from twice as far back, and the whole run when "
        "its difference grows (error carried into the windows); run: the reference integrates from the run's "
        "initial state to the last peak (sees the error carried into a peak, costs a run at the reference "
        "setting); window: only [t_peak - lead_s, t_peak + lag_s] from the run's stored sample (cheap, blind to "
        "earlier error)")
    lead_s: float = Field(3.0, gt=0.0, le=3600.0, description="seconds integrated before each peak (span window "
                          "and auto; auto's memory test doubles it) [s]")
    lag_s: float = Field(1.0, ge=0.0, le=3600.0, description="seconds integrated after each peak [s]")
    reference: Literal["auto", "same", "rk4"] = Field("auto", description="auto: variable-order BDF at tolerances "
                                                      "/ tighten for BDF-family runs, else as same; same: the run's "
                                                      "method at tolerances / tighten (fixed-step methods: step / "
                                                      "4); rk4: RK4 at reference_step_s")
    tighten: float = Field(100.0, ge=2.0, le=1e6, description="factor on rtol and atol of the auto reference")
    reference_step_s: Optional[float] = Field(None, gt=0, le=1.0, description="RK4 step of the rk4 reference [s] "
                                              "(default 0.5 ms)")
    warn_above: float = Field(0.01, gt=0, le=1.0, description="relative difference of a peak above which the run "
                              "warns (0.01 = 1 %)")


__all__ = ["EnvelopeCheck"]
