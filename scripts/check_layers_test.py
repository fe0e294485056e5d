#!/usr/bin/env python3
"""Tests of scripts/check-layers.py (run by `make test` beside the lint).

The lint reads import paths out of Rust source; what it must not do is take
a `//` inside a string for a comment (and lose the rest of the file) or a
`"` inside a comment or a char literal for a string.
"""
import importlib.util
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
spec = importlib.util.spec_from_file_location("check_layers", HERE / "check-layers.py")
layers = importlib.util.module_from_spec(spec)
spec.loader.exec_module(layers)


class StripComments(unittest.TestCase):
    def test_a_double_slash_inside_a_string_keeps_the_code_after_it(self):
        code = 'let s = "https://json-schema.org/x";\nuse crate::api::X;\n'
        self.assertIn("crate::api::X", layers.strip_comments(code))

    def test_a_quote_inside_a_comment_opens_no_string(self):
        code = '// say "hello\nuse crate::api::X;\n// and "bye\n'
        self.assertIn("crate::api::X", layers.strip_comments(code))

    def test_paths_inside_strings_and_comments_are_not_read(self):
        code = 'let a = "crate::edge::Y"; // crate::edge::Z\n/* crate::edge::W /* nested */ crate::edge::V */\nuse crate::api::X;'
        stripped = layers.strip_comments(code)
        self.assertNotIn("edge", stripped)
        self.assertIn("crate::api::X", stripped)

    def test_char_literals_and_raw_strings_are_literals_and_lifetimes_stay_code(self):
        code = "let q = '\"'; let e = '\\''; let r = r#\"a \"// b\"#; fn f<'a>(x: &'a str) { crate::api::X }"
        stripped = layers.strip_comments(code)
        self.assertIn("crate::api::X", stripped)
        self.assertIn("<'a>", stripped)
        self.assertNotIn("//", stripped)


class Graph(unittest.TestCase):
    def test_a_circle_hidden_behind_a_url_in_a_string_is_found(self):
        with tempfile.TemporaryDirectory() as tmp:
            src = Path(tmp)
            (src / "conformance").mkdir()
            (src / "conformance" / "mod.rs").write_text("mod jobs;\nmod tools;\n")
            (src / "conformance" / "jobs.rs").write_text("use super::tools::Tool;\n")
            (src / "conformance" / "tools.rs").write_text(
                'const S: &str = "https://json-schema.org/draft/2020-12/schema";\nuse super::jobs::run;\n'
            )
            saved = layers.SRC
            layers.SRC = src
            try:
                tools = src / "conformance" / "tools.rs"
                self.assertEqual(layers.targets(tools, tools.read_text()), {src / "conformance" / "jobs.rs"})
                self.assertEqual(layers.main(), 1)
            finally:
                layers.SRC = saved


if __name__ == "__main__":
    unittest.main()
