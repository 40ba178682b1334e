"""Proof tasks: Metamath against set.mm and Coq, checked by the real checkers in the sandbox, every cheat refused."""

from __future__ import annotations

import functools
import json
import re
import shutil
import subprocess

import pytest

from passatk.execute import proofs
from passatk.execute._worker import coq, lean, metamath
from passatk.execute.languages import SANDBOX_PATH, ToolchainMissing
from passatk.execute.verifier import Verifier

SET_MM = metamath.SET_MM


def _need(language):
    try:
        proofs.require(language)
    except ToolchainMissing as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def verifier():
    """Two warm sandboxed workers for the whole module (set.mm is read once by each)."""
    with Verifier(workers=2, timeout=20) as v:
        yield v


def _check(verifier, language, statement, proof, **extra):
    (verdict,) = verifier.verify([{"language": language, "statement": statement, "proof": proof, **extra}])
    return verdict


# --------------------------------------------------------------------------- #
# Metamath
# --------------------------------------------------------------------------- #
@functools.lru_cache(maxsize=1)
def _set_mm() -> str:
    with open(SET_MM, encoding="ascii") as fh:
        return fh.read()


def setmm_proof(label: str) -> str:
    """set.mm's own proof of ``label`` (the tokens between its ``$=`` and ``$.``)."""
    text = _set_mm()
    start = re.search(rf"(?<!\S){re.escape(label)}\s+\$p\s", text)
    eq = text.index("$=", start.end())
    end = re.compile(r"(?<!\S)\$\.(?!\S)").search(text, eq)
    return " ".join(text[eq + 2 : end.start()].split())


def perturbed(proof: str) -> str:
    """The compressed proof with one step changed: the step letter in the middle of its steps replaced by another."""
    head, _, letters = proof.partition(")")
    steps = list(letters.replace(" ", ""))
    k = next(i for i in range(len(steps) // 2, len(steps)) if "A" <= steps[i] <= "T")
    steps[k] = "B" if steps[k] == "A" else "A"
    return head + ") " + "".join(steps)


def naive_metamath(tmp_path, block: str, label: str, attempt: str) -> bool:
    """A naive checker: the attempt's statements (or the block with its proof spliced in) after set.mm,
    ``verify proof label``, and a pass when metamath reports no error."""
    added = attempt if "$p" in attempt else block.replace("$= ? $.", f"$= {attempt} $.")
    path = tmp_path / "naive.mm"
    path.write_text(_set_mm() + "\n" + added + "\n", encoding="ascii")
    out = subprocess.run(
        ["metamath", "set scroll continuous", f'read "{path}"', f"verify proof {label}", "exit"],
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    return "?Error" not in out and "?Sorry" not in out


# a false statement about set.mm's complex numbers, and true one of the same shape
FALSE_BLOCK = "${ fk $p |- ( 1 + 1 ) = 3 $= ? $. $}"
MODUS_PONENS = "${ hk.1 $e |- ph $. hk.2 $e |- ( ph -> ps ) $. hk $p |- ps $= ? $. $}"


class TestMetamathReading:
    def test_minif2f_forms_decode_to_the_same_statement(self):
        """miniF2F's @-form (hypotheses ended by $@, comments @( @)) and plain Metamath read the same."""
        wrapped = "$(\n @{\n t.0 @e |- ( ph -> X e. NN ) $@\n @( (Contributed.) @)\n t @p |- ( ph -> X e. RR ) @=\n ? @.\n @}\n$)"
        plain = "${ t.0 $e |- ( ph -> X e. NN ) $. $( (Contributed.) $) t $p |- ( ph -> X e. RR ) $= ? $. $}"
        assert metamath.problem_of(wrapped, "w") == metamath.problem_of(plain, "p")
        assert metamath.problem_of(plain, "p")["label"] == "t"

    def test_a_label_alone_is_set_mm_theorem(self):
        """A statement of one label names set.mm's theorem."""
        assert proofs.metamath_statement("pm2.43") == {"label": "pm2.43", "block": None}

    @pytest.mark.parametrize(
        ("statement", "message"),
        [
            ("${ t $p |- ph $= ? $. t2 $p |- ph $= ? $. $}", "exactly one \\$p"),
            ("${ t $p |- ph $= ? $.", "never closed"),
            ("${ t $p |- ph $= ? $. $} $}", "closes no block"),
            ("t $e", "never ended"),
            ("${ t $p |- \u00e9 $= ? $. $}", "printable ASCII"),
            ("   ", "set.mm label or a Metamath block"),
        ],
    )
    def test_bad_statements_name_the_field(self, statement, message):
        """A statement that cannot be read is a ValueError naming the field, before anything runs."""
        with pytest.raises(ValueError, match=message):
            proofs.metamath_statement(statement, "tasks[0]['statement']")


@pytest.fixture(scope="module")
def set_mm():
    _need("metamath")
    return metamath.database()


class TestMetamathAudit:
    """What the worker refuses before metamath runs (the attempt's statements, keywords and labels)."""

    @pytest.mark.parametrize(
        ("attempt", "error", "message"),
        [
            ("cheat $a |- ( 1 + 1 ) = 3 $. fk $p |- ( 1 + 1 ) = 3 $= cheat $.", metamath.Refused, "an axiom"),
            ("$c TRUST $. fk $p |- ( 1 + 1 ) = 3 $= ? $.", metamath.Refused, "new constants"),
            ("$v qq $. fk $p |- ( 1 + 1 ) = 3 $= ? $.", metamath.Refused, "new variables"),
            ("wqq $f wff ph $. fk $p |- ( 1 + 1 ) = 3 $= ? $.", metamath.Refused, "variable types"),
            ("$[ other.mm $] fk $p |- ( 1 + 1 ) = 3 $= ? $.", metamath.Refused, "file inclusion"),
            ("${ fk.1 $e |- ( 1 + 1 ) = 3 $. fk $p |- ( 1 + 1 ) = 3 $= fk.1 $. $}", metamath.Refused, "other hypotheses"),
            ("fk $p |- ( 1 + 1 ) = 2 $= ? $.", metamath.Refused, "not the problem's"),
            ("ax-mp $p |- ( 1 + 1 ) = 3 $= ? $. fk $p |- ( 1 + 1 ) = 3 $= ax-mp $.", metamath.Refused, "already uses"),
            ("other $p |- ( 1 + 1 ) = 3 $= ? $.", metamath.MetamathError, "no \\$p statement labelled 'fk'"),
            ("fk $p |- ( 1 + 1 ) = 3 $= ?", metamath.MetamathError, "never ended"),
            ("", metamath.MetamathError, "empty"),
        ],
    )
    def test_refusals(self, set_mm, attempt, error, message):
        """Axioms, new symbols, variable types, inclusions, another statement or label: refused, with the reason."""
        with pytest.raises(error, match=message):
            metamath.audit(set_mm, metamath.problem_of(FALSE_BLOCK, "s"), attempt)

    def test_an_added_disjoint_variable_condition_is_refused(self, set_mm):
        """A $d on the problem's mandatory variables weakens the statement: refused."""
        block = "${ dk $p |- ( x = y -> y = x ) $= ? $. $}"
        attempt = "${ $d x y $. dk $p |- ( x = y -> y = x ) $= ? $. $}"
        with pytest.raises(metamath.Refused, match="disjoint-variable"):
            metamath.audit(set_mm, metamath.problem_of(block, "s"), attempt)

    def test_the_database_holds_only_what_the_proof_cites(self, set_mm):
        """The database metamath reads is set.mm's declarations and the cited statements, not set.mm's 41 MB."""
        text, labels = metamath.audit(set_mm, {"label": "sqrt2irr", "block": None}, setmm_proof("sqrt2irr"))
        assert labels == ["sqrt2irr"] and len(text) < 100_000
        assert "$= ?" in text  # cited theorems come without their proofs


@pytest.mark.sandbox
class TestMetamathCheck:
    @pytest.mark.parametrize("label", ["pm2.43", "syl", "mp2b", "2p2e4", "sqrt2irr", "efgi", "fta1"])
    def test_set_mm_theorems_with_their_own_proofs_pass(self, verifier, set_mm, label):
        """set.mm's theorems, their proofs re-supplied, pass."""
        verdict = _check(verifier, "metamath", label, setmm_proof(label))
        assert verdict.status == "passed", verdict.detail

    @pytest.mark.parametrize("label", ["2p2e4", "sqrt2irr", "efgi"])
    def test_a_perturbed_step_fails(self, verifier, set_mm, label):
        """The same proofs with one step changed fail, with metamath's message."""
        verdict = _check(verifier, "metamath", label, perturbed(setmm_proof(label)))
        assert verdict.status == "failed" and "?Error" in verdict.detail

    def test_another_theorems_proof_fails(self, verifier, set_mm):
        """3p2e5's proof offered for 2p2e4 fails: its result is not the statement."""
        verdict = _check(verifier, "metamath", "2p2e4", setmm_proof("3p2e5"))
        assert verdict.status == "failed" and "does not match the statement" in verdict.detail

    def test_a_proof_with_lemmas_passes(self, verifier, set_mm):
        """A proof in source form, with a lemma of its own (inside a block with a hypothesis), passes."""
        attempt = "${ mylem.1 $e |- ph $. mylem.2 $e |- ( ph -> ps ) $. mylem $p |- ps $= wph wps mylem.1 mylem.2 ax-mp $. $}\n"
        attempt += "${ hk.1 $e |- ph $. hk.2 $e |- ( ph -> ps ) $. hk $p |- ps $= wph wps hk.1 hk.2 mylem $. $}"
        assert _check(verifier, "metamath", MODUS_PONENS, attempt).status == "passed"

    def test_unknown_label_is_an_error(self, verifier, set_mm):
        """A statement naming no theorem of set.mm is an error, never a pass."""
        verdict = _check(verifier, "metamath", "no-such-theorem", "wph")
        assert verdict.status == "error" and "not a $p statement" in verdict.detail

    @pytest.mark.slow
    @pytest.mark.parametrize(
        ("name", "block", "label", "attempt", "status"),
        [
            ("axiom", FALSE_BLOCK, "fk", "cheat $a |- ( 1 + 1 ) = 3 $. fk $p |- ( 1 + 1 ) = 3 $= cheat $.", "failed"),
            (
                "new variable",
                FALSE_BLOCK,
                "fk",
                "$v qq $. wqq $f wff qq $. ax-qq $a |- qq $. fk $p |- ( 1 + 1 ) = 3 $= c1 c1 caddc co c3 wceq ax-qq $.",
                "failed",
            ),
            (
                "extra hypothesis",
                FALSE_BLOCK,
                "fk",
                "${ fk.1 $e |- ( 1 + 1 ) = 3 $. fk $p |- ( 1 + 1 ) = 3 $= fk.1 $. $}",
                "failed",
            ),
            ("changed statement", FALSE_BLOCK, "fk", None, "failed"),
            ("another label", FALSE_BLOCK, "fk", None, "compile_error"),
            ("incomplete proof", MODUS_PONENS, "hk", "wph wps hk.1 ? ax-mp", "failed"),
        ],
    )
    def test_cheats_pass_a_naive_checker_and_fail_here(self, verifier, set_mm, tmp_path, name, block, label, attempt, status):
        """Each cheat passes the naive check (set.mm + the attempt, no '?Error') and is not a pass here."""
        if attempt is None:  # set.mm's proof of 1 + 1 = 2, offered as the problem's own or another label's
            target = "fk" if name == "changed statement" else "other"
            attempt = f"{target} $p |- ( 1 + 1 ) = 2 $= {setmm_proof('1p1e2')} $."
        assert naive_metamath(tmp_path, block, label, attempt), f"{name}: the naive checker should accept it"
        verdict = _check(verifier, "metamath", block, attempt)
        assert verdict.status == status, (name, verdict)


class TestMiniF2F:
    def test_the_dataset_reads_488_statements(self, shared_data):
        """miniF2F's 488 Metamath statements load by name; a proof in the file is left out of the statement."""
        problems = proofs.load_minif2f_metamath(shared_data / "minif2f" / "metamath")
        assert len(problems) == 488
        spec = problems["aime-1994-p3"].spec
        assert "aime-1994-p3 $p" in spec["statement"]  # its $p repeated a hypothesis's label
        assert "$= ? $." in problems["mathd-algebra-455"].spec["statement"]

    @pytest.mark.sandbox
    def test_evaluate_gives_pass_at_k_with_error_bars(self, shared_data, tmp_path):
        """`passatk evaluate --dataset minif2f-metamath` on reference proofs, perturbed ones and '?': pass@k, SE, CI.

        Of the 45 reference proofs, 23 verify against Debian's set.mm (2020-12-31): the other 22 cite theorems
        added to set.mm later (metamath says so, here as on the whole database).
        """
        _need("metamath")
        from typer.testing import CliRunner

        from passatk.cli import app

        folder = shared_data / "minif2f" / "metamath"
        samples = tmp_path / "samples.jsonl"
        rows, proved = [], 0
        for path in sorted((folder / "valid").glob("*.mm")):  # the 45 that carry a proof
            items = metamath.parse(metamath.decode_minif2f(path.read_text(), str(path)), str(path))
            proof = next(item[3] for item in items if item[0] == "p")
            if proof == ["?"]:
                continue
            proved += 1
            text = " ".join(proof)
            rows += [{"task_id": path.stem, "completion": c} for c in (text, perturbed(text), "?")]
        samples.write_text("".join(json.dumps(r) + "\n" for r in rows))
        result = CliRunner().invoke(
            app, ["evaluate", str(samples), "--dataset", "minif2f-metamath", "--problems", str(folder), "-k", "1,2", "--json"]
        )
        assert result.exit_code == 0, result.output
        (record,) = json.loads(result.output[result.output.index("{") :]).values()  # one model: the samples file
        assert record["problems"] == proved and record["samples"] == 3 * proved
        one = record["pass_at_k"]["1"]
        assert one["estimate"] == pytest.approx(23 / 135) and one["se"] > 0 and one["ci"][0] < one["estimate"] < one["ci"][1]
        verdicts = [json.loads(line) for line in open(str(samples) + "_results.jsonl")]
        assert not any(v["passed"] for v in verdicts[1::3] + verdicts[2::3])  # perturbed and '?' never pass


# --------------------------------------------------------------------------- #
# Coq
# --------------------------------------------------------------------------- #
ARITH = "Require Import Arith Lia.\n"
ZARITH = "Require Import ZArith Lia.\nOpen Scope Z_scope.\n"
COQ_PROOFS = [  # (statement, proof): a dozen small statements proved with lia, nia, lra and ring
    (ARITH + "Theorem add_comm' (n m : nat) : n + m = m + n.", "Proof. lia. Qed."),
    (ARITH + "Theorem odd_ne (n : nat) : 2 * n + 1 <> 2 * n.", "Proof. lia. Qed."),
    (ARITH + "Theorem lt_succ (n : nat) : n < S n.", "Proof. lia. Qed."),
    (ARITH + "Theorem antisym (a b : nat) : a <= b -> b <= a -> a = b.", "Proof. intros. lia. Qed."),
    (ARITH + "Theorem distr (a b c : nat) : a * (b + c) = a * b + a * c.", "Proof. ring. Qed."),
    (ARITH + "Theorem mul_0 : forall n : nat, n * 0 = 0.", "Proof.\n  intros n.\n  ring.\nQed."),
    (ARITH + "Theorem even_double (n : nat) : Nat.even (2 * n) = true.", "Proof. rewrite Nat.even_mul. reflexivity. Qed."),
    (ZARITH + "Theorem sq (a b : Z) : (a + b) ^ 2 = a ^ 2 + 2 * a * b + b ^ 2.", "Proof. ring. Qed."),
    (ZARITH + "Theorem lt_le (x y : Z) : x < y -> x + 1 <= y.", "Proof. intros. lia. Qed."),
    (ZARITH + "Theorem diff_sq (a b : Z) : (a - b) * (a + b) = a * a - b * b.", "Proof. ring. Qed."),
    (ZARITH + "Theorem sq_nonneg' (x : Z) : x * x >= 0.", "Proof. nia. Qed."),
    ("Require Import Reals Lra.\nOpen Scope R_scope.\nTheorem twice (x : R) : x + x = 2 * x.", "Proof. lra. Qed."),
]
COQ_WRONG = [  # the same kind of statements with one step changed
    (ARITH + "Theorem add_comm' (n m : nat) : n + m = m + n.", "Proof. reflexivity. Qed."),
    (ARITH + "Theorem antisym (a b : nat) : a <= b -> b <= a -> a = b.", "Proof. intros. ring. Qed."),
    (ZARITH + "Theorem lt_le (x y : Z) : x < y -> x + 1 <= y.", "Proof. intros. nia. lia. Qed."),
]
FALSE_COQ = "Theorem five : 2 + 3 = 6."  # false: every proof of it cheats
EXCLUDED_MIDDLE = ARITH + "Theorem em0 (n : nat) : n = 0 \\/ n <> 0."  # needs no axiom: lia proves it
CLASSICAL = "Proof. Abort.\nRequire Import Classical.\nTheorem em0 (n : nat) : n = 0 \\/ n <> 0.\nProof. apply classic. Qed."
REALS = "Require Import Reals Lra.\nOpen Scope R_scope.\n"
LEMMAS = [  # (statement, proof): auxiliary lemmas proved by tactics, the theorem stated again after Abort
    (
        ARITH + "Theorem add_comm' (n m : nat) : n + m = m + n.",
        "Proof. Abort.\nLemma aux (a b : nat) : a + b = b + a.\nProof. lia. Qed.\n"
        "Theorem add_comm' (n m : nat) : n + m = m + n.\nProof. apply aux. Qed.",
    ),
    (
        REALS + "Theorem twice (x : R) : x + x = 2 * x.",
        "Proof. Abort.\nFact two (y : R) : 2 * y = y + y.\nProof. lra. Qed.\nTheorem twice (x : R) : x + x = 2 * x.\n"
        "Proof.\n  rewrite two.\n  reflexivity.\nQed.",
    ),
]
COQ_CHEATS = {
    "Admitted": (FALSE_COQ, "Proof.\nAdmitted.", "assumes axioms of its own"),
    "admit": (FALSE_COQ, "Proof. admit. Admitted.", "assumes axioms of its own"),
    "Axiom": (
        FALSE_COQ,
        "Proof. Abort.\nAxiom cheat : False.\nTheorem five : 2 + 3 = 6.\nProof. destruct cheat. Qed.",
        "axioms of its own: cheat",
    ),
    "Parameter": (
        FALSE_COQ,
        "Proof. Abort.\nParameter p : 2 + 3 = 6.\nTheorem five : 2 + 3 = 6.\nProof. exact p. Qed.",
        "axioms of its own: p",
    ),
    "axiom in a lemma": (
        FALSE_COQ,
        "Proof. Abort.\nModule M. Axiom cheat : False. End M.\nLemma l : False. Proof. exact M.cheat. Qed.\n"
        "Theorem five : 2 + 3 = 6.\nProof. destruct l. Qed.",
        "axioms of its own: M.cheat",
    ),
    "axiom named as the library's": (
        "Require Import Reals.\nTheorem five : 2 + 3 = 6.",
        "Proof. Abort.\nModule ClassicalDedekindReals. Axiom sig_forall_dec : False. End ClassicalDedekindReals.\n"
        "Theorem five : 2 + 3 = 6.\nProof. destruct ClassicalDedekindReals.sig_forall_dec. Qed.",
        "axioms of its own: ClassicalDedekindReals.sig_forall_dec",
    ),
    "notation": (
        FALSE_COQ,
        'Proof. Abort.\nLocal Notation "x + y" := (Nat.mul x y).\nTheorem five : 2 + 3 = 6.\nProof. reflexivity. Qed.',
        "not the problem's statement",
    ),
    "scope": (
        "Require Import ZArith.\nOpen Scope Z_scope.\nTheorem neg : 1 - 2 = 0.",
        "Proof. Abort.\nOpen Scope nat_scope.\nTheorem neg : 1 - 2 = 0.\nProof. reflexivity. Qed.",
        "not the problem's statement",
    ),
    "instance": (
        "Require Import Coq.Classes.RelationClasses Arith.\nTheorem refl0 : @reflexivity nat le _ 0 = le_n 0.",
        "Proof. Abort.\n#[local] Instance my_refl : Reflexive le := le_n.\n"
        "Theorem refl0 : @reflexivity nat le _ 0 = le_n 0.\nProof. reflexivity. Qed.",
        "not the problem's statement",
    ),
    "weaker restatement": (FALSE_COQ, "Proof. Abort.\nTheorem five : True.\nProof. exact I. Qed.", "not the problem's statement"),
    "a lemma Admitted": (
        FALSE_COQ,
        "Proof. Abort.\nLemma x : False. Admitted.\nTheorem five : 2 + 3 = 6.\nProof. destruct x. Qed.",
        "axioms of its own: x",
    ),
    "guard checking": (
        FALSE_COQ,
        "Proof. Abort.\nUnset Guard Checking.\nFixpoint loop (n : nat) : False := loop n.\nSet Guard Checking.\n"
        "Theorem five : 2 + 3 = 6.\nProof. destruct (loop 0). Qed.",
        "assumed to be guarded",
    ),
    "Require outside the list": (
        ARITH + "Theorem t (n : nat) : n + 0 = n.",
        "Proof. lia. Qed.\nFrom Ltac2 Require Import Ltac2.",
        "outside the allowed ones",
    ),
}


def naive_coq(tmp_path, statement: str, proof: str) -> bool:
    """A naive checker: coqc compiles the statement and the proof without an error."""
    path = tmp_path / "Naive.v"
    path.write_text(statement + "\n" + proof + "\n")
    out = subprocess.run(["coqc", "-q", str(path)], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    return out.returncode == 0 and "Error" not in out.stdout + out.stderr


@pytest.fixture(scope="module")
def coq_installed():
    _need("coq")


class TestCoqStatements:
    def test_the_statement_is_read_into_preamble_and_theorem(self):
        """Require/Open Scope sentences, then the theorem: its name and what follows it."""
        got = proofs.coq_statement(ZARITH + "(* a comment. *) Lemma sq (a : Z) :\n  a * a >= 0.")
        assert got["preamble"] == ["Require Import ZArith Lia.", "Open Scope Z_scope."]
        assert (got["name"], got["rest"]) == ("sq", "(a : Z) : a * a >= 0.")

    @pytest.mark.parametrize(
        ("statement", "message"),
        [
            ("Definition x := 1. Theorem t : x = 1.", "not allowed before the theorem"),
            ("Axiom a : False. Theorem t : False.", "not allowed before the theorem"),
            ("Require Import Arith.", "must end with `Theorem"),
            ("Theorem t : 1 = 1", "without a period"),
            ("Theorem t : (* 1 = 1.", "never closed"),
            ("", "is empty"),
        ],
    )
    def test_bad_statements(self, statement, message):
        """A statement with more than Requires before its theorem, or none, is a ValueError."""
        with pytest.raises(ValueError, match=message):
            proofs.coq_statement(statement, "tasks[0]['statement']")


@pytest.mark.sandbox
@pytest.mark.slow
class TestCoqCheck:
    def test_a_dozen_proofs_pass(self, verifier, coq_installed):
        """Hand-written proofs with lia, nia, lra and ring pass (Reals' axioms are those of the problem's libraries)."""
        tasks = [{"language": "coq", "statement": s, "proof": p} for s, p in COQ_PROOFS]
        verdicts = verifier.verify(tasks)
        assert [v.status for v in verdicts] == ["passed"] * len(tasks), [v.detail for v in verdicts if not v.passed]

    def test_wrong_proofs_fail(self, verifier, coq_installed):
        """One step changed: coqc's error, and a failure."""
        for statement, proof in COQ_WRONG:
            verdict = _check(verifier, "coq", statement, proof)
            assert verdict.status == "failed" and "coq:" in verdict.detail, verdict

    @pytest.mark.parametrize(
        "tactics", ["abstract admit", "exact_no_check I", "vm_cast_no_check I", "give_up", "shelve", "admit"]
    )
    def test_tactics_alone_cannot_cheat(self, verifier, coq_installed, tactics):
        """A plain tactic script skips Print Assumptions: tactics that skip a check or give a goal up still fail,
        at Qed, where the kernel checks the term and no goal may be left."""
        proof = f"Proof. {tactics}. Qed."
        assert coq.tactic_script(proof)
        verdict = _check(verifier, "coq", "Theorem f : False.", proof)
        assert verdict.status == "failed" and "coq:" in verdict.detail, verdict

    @pytest.mark.parametrize("name", list(COQ_CHEATS))
    def test_cheats_pass_a_naive_checker_and_fail_here(self, verifier, coq_installed, tmp_path, name):
        """Each cheat compiles (a naive checker's pass) and fails here, with the reason."""
        statement, proof, reason = COQ_CHEATS[name]
        assert naive_coq(tmp_path, statement, proof), f"{name}: coqc should accept it"
        verdict = _check(verifier, "coq", statement, proof)
        assert verdict.status == "failed" and reason in verdict.detail, verdict

    def test_lemmas_proved_by_tactics_pass(self, verifier, coq_installed):
        """Auxiliary lemmas (Abort, the lemmas, the theorem again) pass, Reals' axioms included, without the audit."""
        for statement, proof in LEMMAS:
            assert coq.tactic_script(proof)
            verdict = _check(verifier, "coq", statement, proof)
            assert verdict.status == "passed", verdict

    @pytest.mark.parametrize(
        "proof",
        [
            "Proof. Abort.\nLemma x : False. Proof. admit. Qed.\nTheorem five : 2 + 3 = 6.\nProof. destruct x. Qed.",
            "Proof. Abort.\nLemma x : False. Proof. exact_no_check I. Qed.\nTheorem five : 2 + 3 = 6.\nProof. destruct x. Qed.",
            "Proof. Abort.\nLemma x : False. Proof. abstract admit. Defined.\nTheorem five : 2 + 3 = 6.\nProof. now destruct x. Qed.",
            "Proof. Abort.\nExample x : False := ltac:(admit).\nTheorem five : 2 + 3 = 6.\nProof. destruct x. Qed.",
            "Proof. Lemma x : False. Proof. give_up. Qed. destruct x. Qed.",  # a lemma inside the proof
            "Proof. Abort.\nTheorem five : 2 + 3 = 6.\nProof. Abort.\nTheorem five : 2 + 3 = 6.",  # left open
            "Proof. Abort.\nTheorem five : 5 = 5.\nProof. reflexivity. Qed.",  # another statement, proved
        ],
    )
    def test_lemmas_alone_cannot_cheat(self, verifier, coq_installed, proof):
        """Through the widened fast path (lemmas, Abort, the theorem again: no Print Assumptions), a lemma that leaves
        a goal, skips a check or is stated inside the proof, a proof left open, a restated weaker theorem: all fail,
        at Qed, at the end of the file or at the kernel's comparison with the problem's statement."""
        assert coq.tactic_script(proof)
        verdict = _check(verifier, "coq", FALSE_COQ, proof)
        assert verdict.status == "failed", verdict

    def test_an_axiom_only_the_attempt_loads_is_refused(self, verifier, coq_installed, tmp_path):
        """`Require Import Classical.` and `classic` for a statement over nat: coqc accepts it, and so did the earlier
        policy (every standard library axiom allowed): allowed by name, the same attempt passes, so nothing else in
        the check refuses it.  Refused without, naming the axiom and its library."""
        assert naive_coq(tmp_path, EXCLUDED_MIDDLE, CLASSICAL)
        refused = _check(verifier, "coq", EXCLUDED_MIDDLE, CLASSICAL)
        assert refused.status == "failed", refused
        assert "do not bring: Coq.Logic.Classical_Prop.classic (of Coq.Logic.Classical_Prop)" in refused.detail
        for names in (["classic"], ["Classical_Prop.classic"], ["Coq.Logic.Classical_Prop.classic"]):
            allowed = _check(verifier, "coq", EXCLUDED_MIDDLE, CLASSICAL, allowed_axioms=names)
            assert allowed.status == "passed", (names, allowed)
        other = _check(verifier, "coq", EXCLUDED_MIDDLE, CLASSICAL, allowed_axioms=["lassic", "functional_extensionality"])
        assert other.status == "failed" and "Classical_Prop.classic" in other.detail, other

    def test_the_problems_libraries_bring_their_axioms(self, verifier, coq_installed):
        """A statement over the reals: R's axioms (and classic, which Reals loads) are the problem's, audited or not."""
        statement = REALS + "Theorem em (x : R) : x = 0 \\/ x <> 0."
        audited = "Proof. Abort.\nRequire Import Classical.\nTheorem em (x : R) : x = 0 \\/ x <> 0.\nProof. apply classic. Qed."
        assert not coq.tactic_script(audited)
        assert _check(verifier, "coq", statement, audited).status == "passed"
        lra = "Proof. Abort.\nRequire Import Lra.\nTheorem twice (x : R) : x + x = 2 * x.\nProof. lra. Qed."
        assert _check(verifier, "coq", REALS + "Theorem twice (x : R) : x + x = 2 * x.", lra).status == "passed"

    @pytest.mark.parametrize(
        ("language", "names", "error"),
        [("coq", "classic", TypeError), ("coq", ["classic."], ValueError), ("metamath", ["ax-mp"], ValueError)],
    )
    def test_allowed_axioms_are_coq_names(self, coq_installed, language, names, error):
        """allowed_axioms: a list of Coq names, for Coq tasks only."""
        with pytest.raises(error, match="allowed_axioms"):
            proofs.task_job({"language": language, "statement": FALSE_COQ, "proof": "", "allowed_axioms": names}, "t")

    def test_bad_input_is_never_a_pass(self, verifier, coq_installed):
        """A statement that does not typecheck is an error; a looping proof a timeout; too little memory no pass."""
        bad = _check(verifier, "coq", "Theorem t : nat = true.", "Proof. Qed.")
        assert bad.status == "error" and "statement does not compile" in bad.detail
        loop = _check(verifier, "coq", "Theorem t : True.", "Proof. let rec f n := f (S n) in f 0. Qed.", timeout=1)
        assert loop.status == "timeout"
        (starved,) = verifier.verify(
            [{"language": "coq", "statement": COQ_PROOFS[-1][0], "proof": "Proof. lra. Qed.", "memory_mb": 64}]
        )
        assert starved.status != "passed"

    def test_a_task_that_is_not_a_proof_task(self, verifier, coq_installed):
        """A proof task with a stray key is a ValueError naming it."""
        with pytest.raises(ValueError, match="unknown key"):
            verifier.verify([{"language": "coq", "statement": FALSE_COQ, "proof": "Proof. Qed.", "source": "x"}])


HOSTILE_THEN_VICTIM = [  # (statement, proof, the truth): hostile attempts, each followed by one it could sway
    (FALSE_COQ, "Proof. Abort.\nAxiom cheat : forall P : Prop, P.\n#[global] Hint Resolve cheat : core.", "failed"),
    ("Theorem six : 2 + 2 = 5.", "Proof. auto. Qed.", "failed"),  # proved by the hint, were it still there
    (FALSE_COQ, 'Proof. Abort.\nNotation "x + y" := (Nat.mul x y).', "failed"),
    ("Theorem seven : 2 + 3 = 6.", "Proof. reflexivity. Qed.", "failed"),  # 2 * 3 = 6, were the notation still there
    ("Require Import Arith.\nTheorem eight : False.", "Proof.", "failed"),  # a proof left open
    ("Require Import Arith.\nTheorem nine (n : nat) : n + 0 = n.", "Proof. auto with arith. Qed.", "passed"),
    ("Require Import Arith.\nTheorem ten : True.", 'Proof. exact I. Qed.\n(* "', "failed"),  # a comment left open
    ("Require Import Arith.\nTheorem eleven : 1 = 1.", "Proof. reflexivity. Qed.", "passed"),
]


def naive_warm_coq(attempts, cwd) -> list[bool]:
    """A naive warm checker: one coqtop fed each attempt (statement, then proof) in turn; a pass when no error shows.

    It runs in ``cwd``: Coq's micromega tactics write their caches (``.nia.cache``) into the working directory."""
    script = "".join(f"{s}\n{p}\nLocate passatk_naive_{i}.\n" for i, (s, p, _) in enumerate(attempts))
    out = subprocess.run(["coqtop", "-q"], input=script, capture_output=True, text=True, timeout=120, cwd=cwd)
    said = (out.stdout + out.stderr).split("No object of basename passatk_naive_")[:-1]  # what each attempt printed
    return ["Error" not in chunk for chunk in said] + [False] * (len(attempts) - len(said))  # swallowed: no pass


@pytest.mark.sandbox
@pytest.mark.slow
class TestWarmIsolation:
    def test_the_attempt_cannot_read_the_checks_commands(self, verifier, coq_installed, tmp_path):
        """An attempt that Loads its standard input gets nothing: the commands come on a socket, which cannot be
        opened again.  Through a pipe (the weaker design) Load "/dev/stdin" runs the commands that follow on it,
        before the rest of the attempt, inside the attempt's module, where its axioms print unqualified."""
        piped = subprocess.run(
            ["coqtop", "-q"], input='Load "/dev/stdin".\nLocate passatk_next.\n', capture_output=True, text=True, cwd=tmp_path
        )
        said = piped.stdout + piped.stderr
        assert said.index("No object of basename passatk_next") < said.index("Error"), said  # run inside the Load
        proof = 'Proof. exact I. Qed.\nLoad "/dev/stdin".\nLoad "/proc/self/fd/0".'
        verdict = _check(verifier, "coq", "Theorem t : True.", proof)
        assert verdict.status == "failed" and "Can't find file" in verdict.detail, verdict

    def test_a_hostile_attempt_cannot_sway_the_next_one(self, coq_installed, tmp_path):
        """Attempts checked one after another by one warm toplevel: an axiom with a hint, a notation, a proof or a
        comment left open change nothing for the next attempt.  The weaker design, one coqtop fed every attempt in
        turn (as a REPL-based checker is), lets the axiom's hint prove 2 + 2 = 5 and the notation 2 + 3 = 6, and the
        open comment swallows the honest proof after it."""
        naive = naive_warm_coq(HOSTILE_THEN_VICTIM, tmp_path)
        assert (naive[1], naive[3], naive[7]) == (True, True, False), naive
        with Verifier(workers=1, timeout=20) as one:  # a single worker: every attempt goes to the same warm toplevel
            verdicts = one.verify([{"language": "coq", "statement": s, "proof": p} for s, p, _ in HOSTILE_THEN_VICTIM])
        assert [v.status for v in verdicts] == [truth for _, _, truth in HOSTILE_THEN_VICTIM], [v.detail for v in verdicts]


class TestTacticScript:
    @pytest.mark.parametrize("proof", [p for _, p in COQ_PROOFS])
    def test_the_dozen_proofs_skip_the_walk_of_the_library(self, proof):
        """Proof., tactics (bullets, braces, qualified names), Qed.: no Print Assumptions needed."""
        assert coq.tactic_script(proof)

    @pytest.mark.parametrize("proof", [p for _, p in LEMMAS] + ["intros. lia. Qed.", "Proof. Abort. Theorem t : True. Qed."])
    def test_lemmas_and_tactics_skip_it_too(self, proof):
        """Abort, lemma openings proved by tactics, Proof and Qed: nothing that can add an axiom."""
        assert coq.tactic_script(proof)

    @pytest.mark.parametrize(
        "proof",
        [p for name, (_, p, _) in COQ_CHEATS.items() if name != "weaker restatement"]
        + [
            CLASSICAL,
            "Proof. Abort.\nLocal Lemma x : True. Proof. exact I. Qed.",
            "Proof. Abort.\n#[bypass_check(guard)] Lemma x : False. Proof. exact I. Qed.",
            "Proof. Abort.\nLemma x : False. Proof using. exact I. Qed.",
            "Proof. Abort.\nProgram Lemma x : False. Proof. exact I. Qed.",
            "Proof. Abort.\nAbort All.",
            "Proof. Abort.\nLemmax : False. Proof. exact I. Qed.",
            "Proof. lia. Qed. Axiom c : False.",  # a command after the proof
            "Proof. - Axiom c : False. Qed.",  # a command after a bullet
            "Proof. { Unset Guard Checking. } Qed.",  # after a brace
            "Proof. lia.(* *) Qed.",  # a period Coq may end a sentence at
            "Proof. lia. (* Qed. *) Axiom c : False. Qed.",
            'Proof. idtac "Qed. Axiom c : False.". Qed.',
            "Proof. admit. Admitted.",
            "Proof. lia... Qed.",
            "Proof. #[bypass_check(guard)] lia. Qed.",
            "Proof. Time lia. Qed.",
            "Proof using. lia. Qed.",
            "Proof. lia. Qed",
            "Proof.\u00a0lia. Qed.",
        ],
    )
    def test_anything_else_gets_the_audit(self, proof):
        """Every cheat, and every proof with a command, comment, string or odd character in it, is audited.

        The weaker design (no Print Assumptions for any proof the kernel accepts) passes the Admitted, Axiom
        and Parameter cheats: their theorems type-check; only their assumptions give them away."""
        assert not coq.tactic_script(proof)


class TestCoqJudge:
    """The worker's reading of a check's answers, on answers written by hand."""

    NONCE = "00ff"
    STATEMENT = {"preamble": [], "theorem": "Theorem t : True.", "name": "t", "rest": ": True."}

    def _out(self, attempt=(), check=("passatk_chk_00ff is defined",), axioms=("Closed under the global context",),
             libraries=("Coq.Init.Prelude",), ml=("ltac_plugin.cmxs (using legacy method)",), end=True,
             preamble=("Coq.Init.Prelude",), about=()):  # fmt: skip
        m = f"No object of basename passatk_{self.NONCE}_"
        sections = [("reference", ["passatk_ref_00ff is declared"]), ("preamble", ["Loaded library files: ", *preamble])]
        sections += [("attempt", list(attempt)), ("check", list(check))]
        sections += [("axioms", list(axioms)), ("libraries", ["Loaded library files: ", *libraries])]
        sections += [("ml", ["Loaded ML Modules: ", *ml]), ("asked", [])]
        sections += [
            (f"about{k}", [f"{full.rsplit('.', 1)[-1]} : Prop", f"Expands to: Constant {full}"]) for k, full in enumerate(about)
        ]
        sections += [("end", [])] if end else []
        return "\n".join(f"Coq < {m}{name}\n" + "\n".join(lines) for name, lines in sections) + "\n"

    def _judge(self, answers, how="exited", allowed_axioms=()):
        return coq.judge(self.STATEMENT, self.NONCE, how, answers, ("Coq.",), coq.PLUGINS, True, allowed_axioms)

    def test_clean(self):
        """The kernel took the proof, no axiom, Coq's own libraries and plugins: passed."""
        if not coq.plugins():
            pytest.skip(f"no Coq plugins in {coq.PLUGINS}")
        assert self._judge(self._out()) == ("passed", "")
        axioms = ("Axioms:", "ClassicalDedekindReals.sig_forall_dec : forall (P : forall _ : nat, Prop), sumbool", "  (P 0)")
        reals = ("Coq.Init.Prelude", "Coq.Reals.ClassicalDedekindReals")
        out = self._out(
            axioms=axioms, preamble=reals, libraries=reals, about=("Coq.Reals.ClassicalDedekindReals.sig_forall_dec",)
        )
        assert self._judge(out) == ("passed", "")  # the axiom of a library the preamble loads

    CLASSIC = ("Axioms:", "Classical_Prop.classic : forall P : Prop, or P (not P)")
    LOADED = ("Coq.Init.Prelude", "Coq.Logic.Classical_Prop")

    def test_an_axiom_of_a_library_the_preamble_does_not_load(self):
        """Loaded by the attempt only: refused, named with its library, unless the task allows it by name.  Under a
        library the preamble loads, a module of the attempt's library (`Coq.Logic.Classical_Prop.M.ax`) counts as the
        attempt's library, whose name is longer."""
        if not coq.plugins():
            pytest.skip(f"no Coq plugins in {coq.PLUGINS}")
        out = self._out(axioms=self.CLASSIC, libraries=self.LOADED, about=("Coq.Logic.Classical_Prop.classic",))
        got = self._judge(out)
        assert got[0] == "failed" and "do not bring: Coq.Logic.Classical_Prop.classic (of Coq.Logic.Classical_Prop)" in got[1]
        assert self._judge(out, allowed_axioms=("Classical_Prop.classic",)) == ("passed", "")
        assert self._judge(out, allowed_axioms=("lassic", "Prop.classic.x"))[0] == "failed"
        nested = self._out(
            axioms=self.CLASSIC,
            preamble=("Coq.Init.Prelude", "Coq.Logic"),
            libraries=(*self.LOADED, "Coq.Logic"),
            about=("Coq.Logic.Classical_Prop.classic",),
        )
        assert self._judge(nested)[0] == "failed"
        assert self._judge(self._out(axioms=self.CLASSIC, libraries=self.LOADED))[0] == "failed"  # About said nothing

    @pytest.mark.parametrize(
        ("kwargs", "status", "detail"),
        [
            ({"attempt": ('File "./Attempt.v", line 2, characters 0-4:', "Error: No such goal.")}, "failed", "coq: "),
            ({"check": ("Error: The term has type", "while it is expected")}, "failed", "not the problem's statement"),
            ({"axioms": ("Axioms:", "passatk_M_00ff.cheat : False")}, "failed", "axioms of its own: cheat"),
            ({"axioms": ("Axioms:", "passatk_ref_00ff : True")}, "failed", "axioms of its own: passatk_ref_00ff"),
            ({"axioms": ("Axioms:", "passatk_M_00ff.loop is assumed to be guarded.")}, "failed", "assumed to be guarded"),
            ({"axioms": ("...",)}, "failed", "Print Assumptions"),
            ({"axioms": ()}, "failed", "Print Assumptions"),
            ({"libraries": ("Coq.Init.Prelude", "Ltac2.Ltac2")}, "failed", "outside the allowed ones"),
            ({"ml": ("evil_plugin.cmxs",)}, "failed", "not Coq's own plugins"),
            ({"end": False}, "error", "did not run to its end"),
        ],
    )
    def test_refusals(self, kwargs, status, detail):
        """An error, another statement, an axiom of the attempt's, an unsafe definition, an answer that is not one of
        the two clean ones, a foreign library or plugin, a check cut short: not a pass."""
        if not coq.plugins():
            pytest.skip(f"no Coq plugins in {coq.PLUGINS}")
        got = self._judge(self._out(**kwargs))
        assert got[0] == status and detail in got[1], got

    def test_markers_without_the_nonce_do_not_count(self):
        """Lines that look like the check's answers but lack this check's nonce are not answers."""
        forged = self._out().replace(f"passatk_{self.NONCE}_", "passatk_1234_")
        assert self._judge(forged)[0] == "error"

    @pytest.mark.parametrize(("how", "status"), [("timeout", "timeout"), ("limit", "failed"), ("statement", "error")])
    def test_how_it_ended(self, how, status):
        """Out of time, too much output, a preamble that does not load: never a pass."""
        assert self._judge(self._out(), how=how)[0] == status


# --------------------------------------------------------------------------- #
# Lean: the toolchain is not installed here
# --------------------------------------------------------------------------- #
class TestLean:
    def test_missing_toolchain_says_how_to_install(self, monkeypatch):
        """Without lake and lean on the sandbox's PATH, a Lean task raises ToolchainMissing naming elan and Lake."""
        if shutil.which("lake", path=SANDBOX_PATH) and shutil.which("lean", path=SANDBOX_PATH):
            pytest.skip("a Lean toolchain is installed here")
        proofs._installed.cache_clear()
        with pytest.raises(ToolchainMissing, match="elan"):
            proofs.proof_job("lean", "theorem t : 1 = 1 :=", "rfl")

    def test_statement(self):
        """Imports and opens, then the theorem: its name and the rest, ending with :=."""
        got = proofs.lean_statement("import Mathlib\nopen Nat\ntheorem t (n : ℕ) : n + 0 = n")
        assert got["header"] == ["import Mathlib", "open Nat"] and got["name"] == "t"
        assert got["rest"] == "(n : ℕ) : n + 0 = n :="

    @pytest.mark.parametrize(
        ("said", "status", "detail"),
        [
            ("{n}_same\n{n}_axioms\n't' depends on axioms: [propext, Quot.sound]\n{n}_end\n", "passed", ""),
            ("{n}_same\n{n}_axioms\n't' does not depend on any axioms\n{n}_end\n", "passed", ""),
            ("{n}_same\n{n}_axioms\n't' depends on axioms: [propext, sorryAx]\n{n}_end\n", "failed", "sorryAx"),
            ("{n}_same\n{n}_axioms\n't' depends on axioms: [cheat]\n{n}_end\n", "failed", "cheat"),
            ("{n}_axioms\n't' does not depend on any axioms\n{n}_end\n", "failed", "not the problem's statement"),
            ("{n}_same\n{n}_axioms\n't' does not depend on any axioms\n", "error", "did not run to its end"),
            ("x_same\n{n}_axioms\n't' does not depend on any axioms\n{n}_end\n", "failed", "not the problem's"),
        ],
    )
    def test_judge(self, said, status, detail):
        """Only the nonce's markers count; axioms beyond propext, Classical.choice and Quot.sound fail."""
        nonce = "0123abcd"
        got = lean.judge({"name": "t"}, nonce, said.replace("{n}", f"passatk_{nonce}"))
        assert got[0] == status and detail in got[1]


# --------------------------------------------------------------------------- #
# the service and the reward
# --------------------------------------------------------------------------- #
@pytest.mark.sandbox
class TestIntegrations:
    def test_verify_endpoint(self, verifier, set_mm):
        """POST /verify takes a proof task and answers its verdict."""
        import asyncio

        import httpx

        from passatk.serve import ServeOptions, create_app

        async def ask():
            transport = httpx.ASGITransport(app=create_app(verifier, ServeOptions()))
            async with httpx.AsyncClient(transport=transport, base_url="http://passatk") as client:
                task = {"language": "metamath", "statement": "2p2e4", "proof": setmm_proof("2p2e4")}
                return await client.post("/verify", json=task), await client.post(
                    "/verify", json={**task, "statement": "${ t $p"}
                )

        good, bad = asyncio.run(ask())
        assert good.status_code == 200 and good.json()["status"] == "passed", good.text
        assert bad.status_code == 422 and "statement" in bad.text

    def test_verl_reward(self, set_mm):
        """veRL's compute_score reads the proof from the response's last fenced block."""
        from passatk.integrations import verl

        truth = {"language": "metamath", "statement": "2p2e4"}
        good = verl.compute_score("minif2f", f"```metamath\n{setmm_proof('2p2e4')}\n```", truth, workers=1)
        bad = verl.compute_score("minif2f", f"```metamath\n{setmm_proof('3p2e5')}\n```", json.dumps(truth), workers=1)
        assert (good["score"], bad["score"]) == (1.0, 0.0)
