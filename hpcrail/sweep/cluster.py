"""Where sweep tasks run: an embedded dask ``LocalCluster``, worker jobs on Slurm, the ranks of one MPI
allocation (dask-mpi), or an existing scheduler.

All cluster creation goes through :func:`make_client`, and ``hpcrail sweep`` stays the single entry
point.  ``cluster="slurm"`` submits dask workers as Slurm jobs with dask-jobqueue's ``SLURMCluster``
(site settings from ``~/.config/hpcrail/slurm.yaml``, :mod:`hpcrail.slurm.site`, overridden by
:class:`SlurmOptions`); workers retire before their walltime (``--lifetime``, staggered) and the
cluster, kept at its size by ``adapt``, submits new jobs, so a long sweep resumes on new workers.
"""
from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import socket
import sys

CLUSTERS = ("local", "slurm", "mpi")
#: where the dashboard listens unless told otherwise: the loopback interface only — an unauthenticated
#: page on a shared login node must not be reachable from the network (SSH port forwarding reaches it)
DEFAULT_DASHBOARD = "127.0.0.1:8787"
#: dask-jobqueue's defaults when neither the command line, the site file nor its configuration sets them
FALLBACK_WALLTIME = "01:00:00"


def quiet_dashboard_logs() -> None:
    """Keep tornado's and bokeh's tracebacks (a browser tab closed while the dashboard streams to it:
    ``WebSocketClosedError``, ``StreamClosedError``) out of the terminal: the dashboard runs in this process
    for a local or Slurm cluster, and these are not errors of the sweep."""
    for name in ("tornado.application", "tornado.general", "tornado.access", "tornado.websocket", "bokeh",
                 "bokeh.server", "distributed.dashboard"):
        logging.getLogger(name).setLevel(logging.CRITICAL)


@dataclasses.dataclass
class SlurmOptions:
    """Options of ``hpcrail sweep --cluster slurm`` (``None``: the site file's value, else the default).

    ``jobs``: worker jobs kept running (``adapt(minimum_jobs=jobs, maximum_jobs=jobs)``);
    ``adaptive``: ``(min, max)`` jobs scaled with the queue of pending tasks instead; ``cores``,
    ``memory``, ``walltime`` per job; ``partition``, ``account``: sbatch ``--partition``/``--account``;
    ``lifetime``/``lifetime_stagger``: worker lifetime (default: the walltime minus a margin, so that
    workers end cleanly before Slurm kills them); ``site``: site settings file.
    """

    jobs: int | None = None
    adaptive: tuple[int, int] | None = None
    cores: int | None = None
    memory: str | None = None
    walltime: str | None = None
    partition: str | None = None
    account: str | None = None
    processes: int | None = None
    lifetime: str | None = None
    lifetime_stagger: str | None = None
    interface: str | None = None
    site: str | None = None
    log_directory: str | None = None


def parse_adaptive(text: str) -> tuple[int, int]:
    """``"MIN:MAX"`` → ``(min, max)`` worker jobs.  Raises ``ValueError`` with what is allowed."""
    try:
        lo, hi = (int(x) for x in text.split(":"))
    except ValueError:
        raise ValueError(f"--adaptive {text!r}: expected MIN:MAX worker jobs, e.g. 0:20") from None
    if lo < 0 or hi < max(lo, 1):
        raise ValueError(f"--adaptive {text!r}: need 0 <= MIN <= MAX and MAX >= 1")
    return lo, hi


def walltime_seconds(walltime: str) -> int:
    """Slurm time ``[D-]HH:MM:SS``, ``HH:MM`` or minutes → seconds.  Raises ``ValueError``."""
    try:
        days, _, rest = walltime.rpartition("-")
        parts = [int(x) for x in rest.split(":")]
        if len(parts) == 1:
            sec = parts[0] * 60
        elif len(parts) == 2:
            sec = parts[0] * 3600 + parts[1] * 60 if days else parts[0] * 60 + parts[1]
        elif len(parts) == 3:
            sec = parts[0] * 3600 + parts[1] * 60 + parts[2]
        else:
            raise ValueError
        return sec + (int(days) * 86400 if days else 0)
    except ValueError:
        raise ValueError(f"walltime {walltime!r}: expected [D-]HH:MM:SS") from None


def default_lifetime(walltime: str) -> tuple[str, str]:
    """Worker ``--lifetime`` and ``--lifetime-stagger`` for a job walltime: the worker retires
    (finishing or handing back its tasks) a margin of 10 % (1-10 min) plus the stagger before Slurm
    would kill the job; the stagger (5 %, at most 5 min) keeps all workers from leaving at once."""
    w = walltime_seconds(walltime)
    stagger = int(min(0.05 * w, 300))
    margin = int(min(max(0.1 * w, 60), 600))
    life = max(w - margin - stagger, max(30, w // 2))
    return f"{life}s", f"{stagger}s"


def tunnel_instructions(dashboard_link: str | None) -> str:
    """How to reach a dashboard running on a cluster node from a laptop (SSH port forwarding)."""
    from urllib.parse import urlparse

    if not dashboard_link:
        return ""
    u = urlparse(dashboard_link)
    host, port = u.hostname, u.port or 8787
    login = os.environ.get("SLURM_SUBMIT_HOST") or socket.gethostname() or "LOGIN_NODE"
    return (f"dashboard on {host}:{port}; from your laptop run\n"
            f"    ssh -N -L {port}:{host}:{port} {os.environ.get('USER', 'you')}@{login}\n"
            f"and open http://localhost:{port}{u.path or '/status'}")


def _jobqueue(key: str, default=None):
    """The site's dask-jobqueue configuration ``jobqueue.slurm.<key>`` (dask config files, ``DASK_*``)."""
    import dask

    return dask.config.get(f"jobqueue.slurm.{key}", default=default)


def _slurm_cluster(opts: SlurmOptions, dashboard_address: str | None):
    """A dask-jobqueue ``SLURMCluster`` from the command line ``opts``, the hpcrail site file and the site's
    dask-jobqueue configuration, in that order of precedence (a value none of them sets is left to
    dask-jobqueue's defaults); returns ``(cluster, note)``.  The site file's directives, prologue and the
    worker lifetime are added to the configuration's ``job-extra-directives``, ``job-script-prologue`` and
    ``worker-extra-args`` (``--exclusive`` in the configuration stays)."""
    try:
        from dask_jobqueue import SLURMCluster
    except ImportError:
        raise ValueError("--cluster slurm needs dask-jobqueue: pip install 'hpcrail[slurm]'") from None
    from hpcrail.slurm.site import load_site_config

    site = load_site_config(opts.site)
    cores = opts.cores or site.cores
    walltime = opts.walltime or site.walltime
    life, stagger = default_lifetime(walltime or _jobqueue("walltime") or FALLBACK_WALLTIME)
    life = opts.lifetime or life
    stagger = opts.lifetime_stagger or stagger
    processes = opts.processes or site.processes or cores
    directives = list(site.sbatch)
    if site.qos:
        directives.append(f"--qos={site.qos}")
    prologue = site.prologue_lines()
    sched = dict(_jobqueue("scheduler-options", {}) or {})
    sched["dashboard_address"] = dashboard_address or DEFAULT_DASHBOARD
    kw = dict(cores=cores, processes=processes, memory=opts.memory or site.memory, walltime=walltime,
              queue=opts.partition or site.partition, account=opts.account or site.account,
              job_extra_directives=(list(_jobqueue("job-extra-directives", []) or []) + directives) if directives
              else None,
              job_script_prologue=(list(_jobqueue("job-script-prologue", []) or []) + prologue) if prologue
              else None,
              worker_extra_args=list(_jobqueue("worker-extra-args", []) or []) + ["--lifetime", life,
                                                                                 "--lifetime-stagger", stagger],
              python=sys.executable, interface=opts.interface or site.interface,
              local_directory=site.local_directory, log_directory=opts.log_directory,
              scheduler_options=sched, job_name="hpcrail-sweep")
    cluster = SLURMCluster(**{k: v for k, v in kw.items() if v is not None})
    quiet_dashboard_logs()
    if opts.adaptive:
        lo, hi = opts.adaptive
        cluster.adapt(minimum_jobs=lo, maximum_jobs=hi)
        note = f"adaptive {lo}..{hi} worker jobs"
    else:
        n = opts.jobs or 1
        # adapt with min = max keeps `n` jobs: a worker that retires at its lifetime is replaced
        cluster.adapt(minimum_jobs=n, maximum_jobs=n)
        note = f"{n} worker job{'s' if n != 1 else ''}"
    job_cores = cores or _jobqueue("cores")
    job_walltime = walltime or _jobqueue("walltime")
    note += (f" of {job_cores} core{'s' if job_cores != 1 else ''}"
             f"{f' ({processes} worker processes)' if processes else ''}, walltime {job_walltime}, "
             f"worker lifetime {life} ± {stagger}")
    return cluster, note


def start_mpi_cluster(threads: int = 1, dashboard_address: str | None = None, interface: str | None = None):
    """``hpcrail sweep --cluster mpi`` under ``mpiexec``/``srun`` (dask-mpi): MPI rank 0 runs the dask scheduler,
    rank 1 the sweep driver, every other rank one worker of ``threads`` threads; one allocation of N + 2
    ranks is a cluster of N workers (1 000 workers: ``srun -n 1002``), with no job submitting jobs.

    On rank 1 returns ``(client, close)``; on the other ranks it runs the scheduler or the worker until the
    driver ends, then exits the process (``SystemExit(0)``).  Raises ``ValueError`` when dask-mpi or mpi4py
    is missing or fewer than 3 ranks run."""
    try:
        from dask_mpi import initialize, send_close_signal
        from mpi4py import MPI
    except ImportError:
        raise ValueError("--cluster mpi needs dask-mpi and mpi4py: pip install 'hpcrail[mpi]'") from None
    if MPI.COMM_WORLD.Get_size() < 3:
        raise ValueError(f"--cluster mpi needs at least 3 MPI ranks (scheduler, driver, one worker), got "
                         f"{MPI.COMM_WORLD.Get_size()}: run it under mpiexec -n N or srun -n N")
    from distributed import Client

    from hpcrail.interrupt import ignoring_interrupts

    # the scheduler's dashboard on its node's loopback unless told otherwise (as for the other clusters);
    # HPCRAIL_MPI_INTERFACE (e.g. ib0, or lo on one node) chooses the network interface of the cluster
    interface = interface or os.environ.get("HPCRAIL_MPI_INTERFACE") or None
    logging.getLogger("distributed").setLevel(logging.ERROR)
    quiet_dashboard_logs()
    with ignoring_interrupts() if MPI.COMM_WORLD.Get_rank() != 1 else contextlib.nullcontext():
        is_client = initialize(nthreads=threads, dashboard_address=dashboard_address or DEFAULT_DASHBOARD,
                               interface=interface, memory_limit="auto", exit=False)
    if not is_client:
        raise SystemExit(0)
    client = Client()
    with contextlib.suppress(Exception):   # every worker rank registered (or go on with those there are)
        client.wait_for_workers(MPI.COMM_WORLD.Get_size() - 2, timeout=120)

    def close():
        with contextlib.suppress(Exception):
            client.close()
        with contextlib.suppress(Exception):
            send_close_signal()       # the scheduler stops, then the worker ranks

    return client, close


def default_workers(threads: int = 1) -> int:
    """Worker processes of the embedded cluster: one per core / ``threads`` (numba threads per task)."""
    return max(1, (os.cpu_count() or 1) // max(1, threads))


def make_client(*, scheduler: str | None = None, scheduler_file: str | None = None, cluster: str = "local",
                workers: int | None = None, threads: int = 1, dashboard_address: str | None = DEFAULT_DASHBOARD,
                memory_limit: str | float | None = "auto", slurm: SlurmOptions | None = None,
                say=None) -> tuple:
    """Return ``(client, close)``.

    ``scheduler`` (address) or ``scheduler_file`` joins an existing cluster (``close`` then only
    disconnects); otherwise an embedded ``LocalCluster`` of ``workers`` single-threaded worker
    processes (default: all cores) is started with its dashboard at ``dashboard_address`` (default
    :data:`DEFAULT_DASHBOARD`, the loopback interface; ``"127.0.0.1:0"`` = any free port; ``":8787"`` =
    every interface), its scheduler and workers speaking TLS with temporary credentials
    (``distributed.security.Security.temporary``: no other process can join it).  Raises ``ValueError`` for an
    unknown ``cluster`` kind or both
    ``scheduler`` and ``scheduler_file``.
    """
    from distributed import Client, LocalCluster

    if scheduler and scheduler_file:
        raise ValueError("give either --scheduler or --scheduler-file, not both")
    if scheduler or scheduler_file:
        client = Client(address=scheduler, scheduler_file=scheduler_file)
        return client, client.close
    if cluster not in CLUSTERS:
        raise ValueError(f"unknown cluster {cluster!r}; allowed: {', '.join(CLUSTERS)}")
    if cluster == "mpi":
        return start_mpi_cluster(threads, dashboard_address)
    if cluster == "slurm":
        sc, note = _slurm_cluster(slurm or SlurmOptions(), dashboard_address)
        client = Client(sc)
        if say is not None:
            say(f"slurm: {note}")
            say(tunnel_instructions(getattr(client, "dashboard_link", None)))

        def close_slurm():
            with contextlib.suppress(Exception):
                client.close()
            with contextlib.suppress(Exception):
                sc.close()

        return client, close_slurm
    from distributed.security import Security

    from hpcrail.interrupt import ignoring_interrupts

    n = workers or default_workers(threads)
    # TLS with throw-away credentials: only this process (which holds them) can join the scheduler or run
    # code in its workers; the workers start with SIGINT ignored (Ctrl-C stops the sweep from the driver)
    security = Security.temporary()
    with ignoring_interrupts():
        lc = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                          dashboard_address=dashboard_address or DEFAULT_DASHBOARD, memory_limit=memory_limit,
                          silence_logs=logging.ERROR, security=security, protocol="tls://")
    quiet_dashboard_logs()
    client = Client(lc, security=security)

    def close():
        with contextlib.suppress(Exception):
            client.close()
        with contextlib.suppress(Exception):
            lc.close()

    return client, close


def total_threads(client) -> int:
    """Worker threads currently in the cluster (at least 1)."""
    try:
        return max(1, sum(client.nthreads().values()))
    except Exception:  # noqa: BLE001
        return 1


__all__ = ["make_client", "start_mpi_cluster", "default_workers", "total_threads", "CLUSTERS", "SlurmOptions", "parse_adaptive",
           "default_lifetime", "tunnel_instructions", "DEFAULT_DASHBOARD", "quiet_dashboard_logs"]
