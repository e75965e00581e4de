"""Sphinx configuration: the guides (docs/*.md, MyST) and the API reference
(docs/reference/, autodoc over the installed package's docstrings, Google
style through napoleon). `make docs` builds it with -W --keep-going."""

import importlib

from docutils import nodes
from docutils.parsers.rst import Directive

import symmem

project = "symmem"
author = "the symmem authors"
copyright = "the symmem authors"
release = version = symmem.__version__

extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.napoleon"]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
# docs/bench/ holds the benchmarks' raw reports, which benchmarks.md links to.
exclude_patterns = ["_build", "bench/**", "**/README.md"]

myst_heading_anchors = 3  # [text](page.md#a-heading) links
myst_enable_extensions = ["deflist"]
suppress_warnings = ["myst.xref_missing"]  # links into docs/bench/ and the source tree

# `name` in a docstring links to the object where one exists, else reads as code.
default_role = "py:obj"
autodoc_member_order = "bysource"
autodoc_default_options = {"undoc-members": False}
# Triton is needed by symmem.device.triton only (its kernels' functions are
# read through the mock's decorator); torch and CuPy are imported when used.
autodoc_mock_imports = ["triton"]
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_rtype = False

html_theme = "alabaster"
html_title = f"symmem {release}"


class NamesDirective(Directive):
    """``.. symmem-names:: module``: the names in module.__all__, as a list
    (symmem.bindings has hundreds; their documentation is NVSHMEM's)."""

    required_arguments = 1

    def run(self):
        module = importlib.import_module(self.arguments[0])
        names = sorted(module.__all__, key=str.lower)
        paragraph = nodes.paragraph()
        for i, name in enumerate(names):
            if i:
                paragraph += nodes.Text(", ")
            paragraph += nodes.literal(name, name)
        return [paragraph]


def setup(app):
    app.add_directive("symmem-names", NamesDirective)
