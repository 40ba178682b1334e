"""Prompts written here in MultiPL-E's format for languages whose prompt files are not in ../shared/data.

One problem each (HumanEval/53, ``add``), in the shape MultiPL-E's translator
gives it: the docstring as comments and the signature (``prompt``), the test
harness appended after the completion (``tests``), its ``stop_tokens``; with
a right and a wrong completion.
"""

ADD = {
    "php": (
        "<?php\n// Add two numbers x and y\n// >>> add(2, 3)\n// 5\nfunction add($x, $y) {\n",
        "function candidate(...$args) {\n    return add(...$args);\n}\n\nfunction test(): void {\n"
        '    if (candidate(0, 1) !== 1) { throw new Exception("Test failed!"); }\n'
        '    if (candidate(5, 7) !== 12) { throw new Exception("Test failed!"); }\n}\n\ntest();',
        ["\nfunction", "\n?>", "\n//", "\n#"],
        "    return $x + $y;\n}\n",
        "    return $x - $y;\n}\n",
    ),
    "rb": (
        "# Add two numbers x and y\n# >>> add.call(2, 3)\n# 5\ndef add(x, y)\n",
        "require 'test/unit'\nclass TestHumanEval < Test::Unit::TestCase\n  def test_add\n    candidate = method(:add)\n"
        "    assert_equal(1, candidate.call(0, 1))\n    assert_equal(12, candidate.call(5, 7))\n  end\nend\n",
        ["\nclass", "\ndef", "\n#", "\n\n"],
        "  x + y\nend\n",
        "  x - y\nend\n",
    ),
    "lua": (
        "-- Add two numbers x and y\n-- >>> add(2, 3)\n-- 5\nlocal function add(x, y)\n",
        "lu = require('luaunit')\n\nfunction test_humaneval()\nlocal candidate = add\n    lu.assertEquals(candidate(0, 1), 1)\n"
        "    lu.assertEquals(candidate(5, 7), 12)\nend\n\nos.exit(lu.LuaUnit.run())",
        ["\nlocal", "\nfunction", "\n--", "\n\n"],
        "    return x + y\nend\n",
        "    return x - y\nend\n",
    ),
    "pl": (
        "# Add two numbers x and y\n# >>> add(2, 3)\n# 5\nsub add {\n    my($x, $y) = @_;\n",
        "use Test::Deep;\n\n\nsub testhumaneval {\n    my $candidate = \\&add;\n        if(eq_deeply($candidate->(0, 1),1)) {\n"
        '        print "ok!" }else{\n        exit 1;\n        }\n        if(eq_deeply($candidate->(5, 7),12)) {\n'
        '        print "ok!" }else{\n        exit 1;\n        }\n}\n\ntesthumaneval();',
        ["\nsub", "\n#", "\n\n"],
        "    return $x + $y;\n}\n",
        "    return $x - $y;\n}\n",
    ),
    "r": (
        "# Add two numbers x and y\n# >>> add(2, 3)\n# 5\nadd <- function(x, y) {\n",
        "test_humaneval <- function() {\ncandidate <- add\n    if(!identical(candidate(0, 1), 1)){quit('no', 1)}\n"
        "    if(!identical(candidate(5, 7), 12)){quit('no', 1)}\n}\ntest_humaneval()",
        ["\n#", "\n```", "\n\n"],
        "  x + y\n}\n",
        "  x - y\n}\n",
    ),
    "sh": (
        '#!/bin/bash\n# Add two numbers x and y\n# >>> $(add "2" "3")\n# "5"\n#\n# $1 is an integer\n# $2 is an integer\nadd() {\n',
        '}\n\ncandidate() {\n    add "$@"\n}\n\nset -e\nrun_test() {\n    [[ $(candidate "0" "1") = "1" ]]\n'
        '    [[ $(candidate "5" "7") = "12" ]]\n}\n\nrun_test',
        ["\n}"],
        "    echo $(( $1 + $2 ))\n",
        "    echo $(( $1 - $2 ))\n",
    ),
    "cs": (
        "using System;\nusing System.Numerics;\nusing System.Diagnostics;\nusing System.Collections.Generic;\nusing System.Linq;\n"
        "using System.Text;\nusing System.Security.Cryptography;\nclass Problem {\n    // Add two numbers x and y\n"
        "    // >>> Add((2L), (3L))\n    // (5L)\n    public static long Add(long x, long y) {\n",
        "    }\n    public static void Main(string[] args) {\n    Debug.Assert(Add((0L), (1L)) == (1L));\n"
        "    Debug.Assert(Add((5L), (7L)) == (12L));\n    }\n\n}\n",
        ["\n    }\n"],
        "        return x + y;\n",
        "        return x - y;\n",
    ),
    "rkt": (
        "#lang racket\n\n;; Add two numbers x and y\n;; >>> (add 2 3)\n;; 5\n(define (add x y)\n",
        "(require rackunit)\n\n(define (test-humaneval) \n\n  (let (( candidate add))\n    (check-equal? (candidate 0 1) 1)\n"
        "    (check-equal? (candidate 5 7) 12)\n))\n\n(test-humaneval)",
        ["\n(define ", "\n#|", "\n;", "\n("],
        "  (+ x y))\n",
        "  (- x y))\n",
    ),
    "hs": (
        "-- | Add two numbers x and y\n-- >>> add 2 3\n-- 5\nadd :: Int -> Int -> Int\nadd x y = ",
        "\n\nmain :: IO ()\nmain = do\n  let candidate = add\n"
        '  if candidate 0 1 == 1 then pure () else error "Test failed"\n'
        '  if candidate 5 7 == 12 then pure () else error "Test failed"\n  pure ()',
        ["\n\n", "\n--"],
        "x + y\n",
        "x - y\n",
    ),
    "ml": (
        "(**Add two numbers x and y\n * >>> add 2 3\n * 5\n*)\nlet add (x : int) (y : int) : int =\n",
        "\nlet assertions =\n assert (add 0 1 = 1);\n assert (add 5 7 = 12);\n ()\n",
        ["\n\n", "\n(*", "\ntype"],
        "  x + y\n",
        "  x - y\n",
    ),
    "d": (
        "import std.math;\nimport std.typecons;\n/*\nAdd two numbers x and y\n    >>> add(2L, 3L)\n    5L\n*/\nlong add(long x, long y) \n",
        "unittest\n{\n    alias candidate = add;\n\n    assert(candidate(0L, 1L) == 1L);\n    assert(candidate(5L, 7L) == 12L);\n}\n"
        "void main(){}",
        ["\n\n", "\nvoid", "\nbool", "\nint"],
        "{\n    return x + y;\n}\n",
        "{\n    return x - y;\n}\n",
    ),
    "elixir": (
        "# Add two numbers x and y\n# >>> HumanEval.add(2, 3)\n# 5\ndefmodule HumanEval do\n  def candidate(x, y), do: add(x, y)\n"
        "  def add(x, y) do\n",
        "ExUnit.start()\ndefmodule HumanEvalTestAdd do\n  use ExUnit.Case, async: true\n  test 'add' do\n"
        "    assert 1 == HumanEval.candidate(0, 1)\n    assert 12 == HumanEval.candidate(5, 7)\n  end\nend\n",
        ["\ndefmodule", "\ndefp", "\ndef ", "\n#", "\n\n"],
        "    x + y\n  end\nend\n",
        "    x - y\n  end\nend\n",
    ),
}


def records():
    """MultiPL-E records (``name``, ``language``, ``prompt``, ``tests``, ``stop_tokens``) and the two completions of each."""
    out = []
    for lang, (prompt, tests, stops, right, wrong) in ADD.items():
        rec = {"name": f"HumanEval_53_add_{lang}", "language": lang, "prompt": prompt, "tests": tests, "stop_tokens": stops}
        out.append((rec, right, wrong))
    return out
