"""Proof checking: a cold checker per attempt against passatk's checks, the same attempts, in one run.

**Metamath.** The attempts are miniF2F's 45 Metamath statements that come
with a proof (``../shared/data/minif2f/metamath/valid``), each three times:
the reference proof, the same with one step changed, and ``?``.  *Cold*: what
a harness without passatk does, per attempt: set.mm followed by the
problem's block with the attempt spliced in, written to a fresh directory,
then ``metamath read; verify proof <label>`` (a subprocess, no sandbox); it
passes when metamath prints no error and no warning.  *passatk*: the same
attempts as Verifier tasks, hardened (the attempt audited, the database cut
to what it cites, ``metamath`` in the sandbox), the workers' start and their
reading of set.mm included.

**Coq.** A dozen small theorems proved with ``lia``/``ring``/``lra``, three
of them again through an auxiliary lemma (``Abort``, the lemma, the theorem
stated again), three wrong proofs and four cheats (``Admitted``, a notation,
an axiom, ``Require Import Classical`` for a statement over ``nat``).  *Cold*: ``coqc`` on the statement and the
proof per attempt (a pass when it compiles: the naive check).  *passatk*:
the hardened check in the sandbox: a ``coqtop`` child forked per attempt
from a warm toplevel that loaded the statement's libraries once, the
attempt loaded in a module of the check's own, the kernel's type check
against the statement elaborated first, ``Print Assumptions``, libraries
and ML modules.  Then where a check's time goes, attempt by attempt, timed
by Coq itself (``Time``) in one plain ``coqtop``: loading the libraries (what
the warm toplevel saves), the proof, and ``Print Assumptions`` (what each
passing attempt still pays).

Both sides get the same number of workers (threads for the cold side).

    python benchmarks/bench_proofs.py                     # both parts, 2 workers
    python benchmarks/bench_proofs.py --part metamath --workers 2
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import resource
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from passatk.execute import proofs  # noqa: E402
from passatk.execute._worker import metamath  # noqa: E402
from passatk.execute.verifier import Verifier  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "minif2f" / "metamath"


def _perturbed(proof: str) -> str:
    """A compressed proof with one step letter changed (the one in the middle of its steps)."""
    head, _, letters = proof.partition(")")
    steps = list(letters.replace(" ", ""))
    k = next(i for i in range(len(steps) // 2, len(steps)) if "A" <= steps[i] <= "T")
    steps[k] = "B" if steps[k] == "A" else "A"
    return head + ") " + "".join(steps)


def metamath_attempts() -> list[tuple[str, str, str]]:
    """``(block with proof ?, label, attempt)`` for each of the 45 proved problems, three attempts each."""
    out = []
    for path in sorted((DATA / "valid").glob("*.mm")):
        items = metamath.parse(metamath.decode_minif2f(path.read_text(), str(path)), str(path))
        proof = next(item[3] for item in items if item[0] == "p")
        if proof == ["?"]:
            continue
        problem = metamath.problem_of(path.read_text(), str(path))
        block = " ".join(problem["block"])
        text = " ".join(proof)
        out += [(block, problem["label"], attempt) for attempt in (text, _perturbed(text), "?")]
    return out


def cold_metamath(set_mm: str, block: str, label: str, attempt: str) -> bool:
    """One attempt the cold way: set.mm and the block, with the attempt spliced in, read and verified by metamath."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "check.mm")
        with open(path, "w", encoding="ascii") as fh:
            fh.write(set_mm + "\n" + block.replace("$= ? $.", f"$= {attempt} $.") + "\n")
        out = subprocess.run(
            ["metamath", "set scroll continuous", 'read "check.mm"', f"verify proof {label}", "exit"],
            cwd=tmp,
            capture_output=True,
            text=True,
            timeout=600,
        ).stdout
    return not re.search(r"^(\?|Warning)", out, re.M) and f"\n{label} \n" in out


COQ_ARITH = "Require Import Arith Lia.\n"
COQ_Z = "Require Import ZArith Lia.\nOpen Scope Z_scope.\n"
COQ_R = "Require Import Reals Lra.\nOpen Scope R_scope.\n"
COQ = [
    (COQ_ARITH + "Theorem add_comm' (n m : nat) : n + m = m + n.", "Proof. lia. Qed."),
    (COQ_ARITH + "Theorem odd_ne (n : nat) : 2 * n + 1 <> 2 * n.", "Proof. lia. Qed."),
    (COQ_ARITH + "Theorem lt_succ (n : nat) : n < S n.", "Proof. lia. Qed."),
    (COQ_ARITH + "Theorem antisym (a b : nat) : a <= b -> b <= a -> a = b.", "Proof. intros. lia. Qed."),
    (COQ_ARITH + "Theorem distr (a b c : nat) : a * (b + c) = a * b + a * c.", "Proof. ring. Qed."),
    (COQ_ARITH + "Theorem mul_0 : forall n : nat, n * 0 = 0.", "Proof. intros n. ring. Qed."),
    (COQ_ARITH + "Theorem even_double (n : nat) : Nat.even (2 * n) = true.", "Proof. rewrite Nat.even_mul. reflexivity. Qed."),
    (COQ_Z + "Theorem sq (a b : Z) : (a + b) ^ 2 = a ^ 2 + 2 * a * b + b ^ 2.", "Proof. ring. Qed."),
    (COQ_Z + "Theorem lt_le (x y : Z) : x < y -> x + 1 <= y.", "Proof. intros. lia. Qed."),
    (COQ_Z + "Theorem diff_sq (a b : Z) : (a - b) * (a + b) = a * a - b * b.", "Proof. ring. Qed."),
    (COQ_Z + "Theorem sq_nonneg' (x : Z) : x * x >= 0.", "Proof. nia. Qed."),
    (COQ_R + "Theorem twice (x : R) : x + x = 2 * x.", "Proof. lra. Qed."),
    (
        COQ_ARITH + "Theorem add_comm' (n m : nat) : n + m = m + n.",
        "Proof. Abort.\nLemma aux (a b : nat) : a + b = b + a.\nProof. lia. Qed.\n"
        "Theorem add_comm' (n m : nat) : n + m = m + n.\nProof. apply aux. Qed.",
    ),
    (
        COQ_Z + "Theorem sq_nonneg' (x : Z) : x * x >= 0.",
        "Proof. Abort.\nLemma sq0 (y : Z) : 0 <= y * y.\nProof. nia. Qed.\n"
        "Theorem sq_nonneg' (x : Z) : x * x >= 0.\nProof. pose proof (sq0 x). lia. Qed.",
    ),
    (
        COQ_R + "Theorem twice (x : R) : x + x = 2 * x.",
        "Proof. Abort.\nFact two (y : R) : 2 * y = y + y.\nProof. lra. Qed.\n"
        "Theorem twice (x : R) : x + x = 2 * x.\nProof. rewrite two. reflexivity. Qed.",
    ),
    (COQ_ARITH + "Theorem add_comm' (n m : nat) : n + m = m + n.", "Proof. reflexivity. Qed."),
    (COQ_ARITH + "Theorem antisym (a b : nat) : a <= b -> b <= a -> a = b.", "Proof. intros. ring. Qed."),
    (COQ_Z + "Theorem lt_le (x y : Z) : x < y -> x + 1 <= y.", "Proof. intros. nia. lia. Qed."),
    ("Theorem five : 2 + 3 = 6.", "Proof.\nAdmitted."),
    (
        "Theorem five : 2 + 3 = 6.",
        'Proof. Abort.\nLocal Notation "x + y" := (Nat.mul x y).\nTheorem five : 2 + 3 = 6.\nProof. reflexivity. Qed.',
    ),
    ("Theorem five : 2 + 3 = 6.", "Proof. Abort.\nAxiom cheat : False.\nTheorem five : 2 + 3 = 6.\nProof. destruct cheat. Qed."),
    (
        COQ_ARITH + "Theorem em0 (n : nat) : n = 0 \\/ n <> 0.",
        "Proof. Abort.\nRequire Import Classical.\nTheorem em0 (n : nat) : n = 0 \\/ n <> 0.\nProof. apply classic. Qed.",
    ),
]


def cold_coq(statement: str, proof: str) -> bool:
    """One attempt the cold way: coqc on the statement and the proof; a pass when it compiles."""
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "Attempt.v").write_text(statement + "\n" + proof + "\n")
        return subprocess.run(["coqc", "-q", "Attempt.v"], cwd=tmp, capture_output=True, timeout=600).returncode == 0


def _children_cpu() -> float:
    """CPU seconds of this process's finished children (the cold side's subprocesses)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


_TIMED = re.compile(r"Finished transaction in [\d.]+ secs \(([\d.]+)u,([\d.]+)s\)")


def coq_profile(attempts: list) -> None:
    """Print, per attempt, the CPU ms Coq spends loading the libraries, on the proof and on ``Print Assumptions``."""
    print("\nwhere a Coq check's CPU goes (ms, Coq's own Time, one plain coqtop per attempt):")
    print("| attempt | libraries | proof | Print Assumptions |")
    print("|---|---|---|---|")
    totals = [0.0, 0.0, 0.0]
    for statement, proof in attempts:
        parsed = proofs.coq_statement(statement)
        with tempfile.TemporaryDirectory() as tmp:
            Path(tmp, "A.v").write_text(parsed["theorem"] + "\n" + proof + "\n")
            lines = [f"Time {line}" for line in parsed["preamble"]] or ["Time Check I."]
            lines += [f'Time Load "{tmp}/A.v".', f"Time Print Assumptions {parsed['name']}."]
            script = "\n".join(lines) + "\n"
            said = subprocess.run(["coqtop", "-q"], input=script, capture_output=True, text=True, timeout=600).stdout
        times = [1000 * (float(u) + float(s)) for u, s in _TIMED.findall(said)]
        if len(times) < 3:
            continue
        parts = [sum(times[:-2]), times[-2], times[-1]]
        totals = [a + b for a, b in zip(totals, parts)]
        print(f"| {parsed['name']}: {' '.join(proof.split())[:28]} | {parts[0]:.0f} | {parts[1]:.0f} | {parts[2]:.0f} |")
    print(f"| all {len(attempts)} | {totals[0]:.0f} | {totals[1]:.0f} | {totals[2]:.0f} |")


def compare(name: str, language: str, attempts: list, cold, workers: int) -> None:
    """Time the cold side, then passatk's (workers started in the timed region), and print the comparison."""
    t0, used = time.perf_counter(), _children_cpu()
    with ThreadPoolExecutor(workers) as pool:
        cold_verdicts = list(pool.map(lambda a: cold(*a), attempts))
    cold_s, cold_cpu = time.perf_counter() - t0, _children_cpu() - used
    t0 = time.perf_counter()
    with Verifier(workers=workers, timeout=60) as verifier:
        verdicts = verifier.verify(attempts_as_tasks(language, attempts))
        warm_s = time.perf_counter() - t0
        t1 = time.perf_counter()
        again = verifier.verify(attempts_as_tasks(language, attempts, again=True))
        again_s = time.perf_counter() - t1
    ours = [v.passed for v in verdicts]
    agree = sum(a == b for a, b in zip(cold_verdicts, ours))
    n = len(attempts)
    print(f"\n{name}: {n} attempts, {sum(cold_verdicts)} cold passes, {sum(ours)} passatk passes, {agree}/{n} verdicts agree")
    print("| side | wall | attempts/s | per attempt |")
    print("|---|---|---|---|")
    print(f"| cold ({workers} threads) | {cold_s:.1f} s | {n / cold_s:.1f} | {1000 * cold_s / n:.0f} ms |")
    print(f"| passatk ({workers} workers, start included) | {warm_s:.1f} s | {n / warm_s:.1f} | {1000 * warm_s / n:.0f} ms |")
    print(f"| passatk, warm workers (same attempts again) | {again_s:.1f} s | {n / again_s:.1f} | {1000 * again_s / n:.0f} ms |")
    print(f"ratio cold / passatk: {cold_s / warm_s:.1f}x (start included), {cold_s / again_s:.1f}x (warm)")
    checker = sum(v.cpu for v in again)
    print(
        f"CPU per attempt: cold {1000 * cold_cpu / n:.0f} ms; passatk's checker, warm {1000 * checker / n:.1f} ms "
        f"(the checking processes' own, from the verdicts; the worker's Python not counted): {cold_cpu / checker:.1f}x"
    )
    disagree = [
        (a[1] if language == "metamath" else a[0].splitlines()[-1], c) for a, c, o in zip(attempts, cold_verdicts, ours) if c != o
    ]
    if disagree:
        print("verdicts that differ (attempt, cold verdict):", disagree[:10])


def attempts_as_tasks(language: str, attempts: list, again: bool = False) -> list[dict]:
    """The attempts as Verifier tasks (``again``: a trailing space each, so that none is answered from memory)."""
    tail = " " if again else ""
    if language == "metamath":
        return [{"language": "metamath", "statement": block, "proof": attempt + tail} for block, _, attempt in attempts]
    return [{"language": "coq", "statement": statement, "proof": proof + tail} for statement, proof in attempts]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--part", choices=("metamath", "coq", "all"), default="all")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    print(f"{time.strftime('%Y-%m-%d %H:%M')}, {platform.node()}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")
    if args.part in ("metamath", "all"):
        if not DATA.is_dir():
            sys.exit(f"miniF2F's Metamath statements not found at {DATA}")
        set_mm = Path(metamath.SET_MM).read_text(encoding="ascii")
        compare(
            "Metamath (miniF2F valid, 45 proofs x 3)",
            "metamath",
            metamath_attempts(),
            lambda *a: cold_metamath(set_mm, *a),
            args.workers,
        )
    if args.part in ("coq", "all"):
        compare("Coq (12 proofs, 3 through a lemma, 3 wrong, 4 cheats)", "coq", COQ, cold_coq, args.workers)
        coq_profile(COQ)


if __name__ == "__main__":
    main()
