"""Small real programs in five compiled or non-Python languages, for the Verifier's and passatk serve's tests.

Each language has a function ``f(x) = x + 1`` written right, written wrong
(``x``) and written so that it does not build, and test code in the language
that checks ``f(1) == 2`` (a ``main`` that asserts).  ``source + "\\n" + tests``
is a whole program.
"""

from __future__ import annotations

import pytest

from passatk.execute import languages

PROGRAMS = {
    "cpp": {
        "right": "int f(int x) { return x + 1; }",
        "wrong": "int f(int x) { return x; }",
        "broken": "int f(int x) { return x + 1 }",
        "tests": "#include <cassert>\nint main() { assert(f(1) == 2); }",
    },
    "java": {
        "right": "class Solution { static int f(int x) { return x + 1; } }",
        "wrong": "class Solution { static int f(int x) { return x; } }",
        "broken": "class Solution { static int f(int x) { return x + 1 } }",
        "tests": "public class Main { public static void main(String[] args) { assert Solution.f(1) == 2; } }",
    },
    "nodejs": {
        "right": "function f(x) { return x + 1; }",
        "wrong": "function f(x) { return x; }",
        "broken": "function f(x) { return x + ; }",
        "tests": "const assert = require('assert');\nassert.deepStrictEqual(f(1), 2);",
    },
    "go": {
        "right": "package main\n\nfunc f(x int) int { return x + 1 }",
        "wrong": "package main\n\nfunc f(x int) int { return x }",
        "broken": "package main\n\nfunc f(x int) int { return x + }",
        "tests": 'func main() {\n\tif f(1) != 2 {\n\t\tpanic("f(1) != 2")\n\t}\n}',
    },
    "rust": {
        "right": "fn f(x: i32) -> i32 { x + 1 }",
        "wrong": "fn f(x: i32) -> i32 { x }",
        "broken": "fn f(x: i32) -> i32 { x + }",
        "tests": "fn main() { assert_eq!(f(1), 2); }",
    },
}
#: A program that reads two numbers and prints their sum, then writes to stderr and exits 3.
ADD_STDIN = {
    "cpp": '#include <iostream>\nint main() { long a, b; std::cin >> a >> b; std::cout << a + b << "\\n"; '
    'std::cerr << "bye"; return 3; }',
    "rust": "use std::io::Read;\nfn main() { let mut s = String::new(); std::io::stdin().read_to_string(&mut s).unwrap();\n"
    "    let n: Vec<i64> = s.split_whitespace().map(|w| w.parse().unwrap()).collect();\n"
    '    println!("{}", n[0] + n[1]); eprint!("bye"); std::process::exit(3); }',
}


def need(language: str) -> None:
    """Skip the test, with the package to install, when ``language``'s toolchain is not here."""
    try:
        languages.require(language)
    except languages.ToolchainMissing as exc:
        pytest.skip(str(exc))
