"""Running untrusted programs against their tests: sandbox, warm workers, journal, benchmark formats, jobs, the Verifier."""

from passatk.exceptions import SandboxError, SandboxErrorWarning, SandboxWarning, WorkerLost
from passatk.execute._worker.verdict import Verdict
from passatk.execute.jobs import Task, job_key, job_of
from passatk.execute.journal import Journal
from passatk.execute.pool import FifoScheduler, LocalPool, Scheduler
from passatk.execute.ray_backend import RayPool
from passatk.execute.runner import EvaluationResult, evaluate
from passatk.execute.sandbox import Limits, Sandbox, SandboxedWorker, plan_sandbox
from passatk.execute.tasks import Problem, load_problems, read_samples
from passatk.execute.verifier import Verifier, shared_verifier

__all__ = [
    "EvaluationResult",
    "FifoScheduler",
    "Journal",
    "Limits",
    "LocalPool",
    "Problem",
    "RayPool",
    "Sandbox",
    "SandboxError",
    "SandboxErrorWarning",
    "SandboxWarning",
    "SandboxedWorker",
    "Scheduler",
    "Task",
    "Verdict",
    "Verifier",
    "WorkerLost",
    "evaluate",
    "job_key",
    "job_of",
    "load_problems",
    "plan_sandbox",
    "read_samples",
    "shared_verifier",
]
