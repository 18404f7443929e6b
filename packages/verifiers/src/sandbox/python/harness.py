"""Runs one ARCANE-style code rule inside the sandbox and reports its verdict.

Protocol (one request, one answer):
  stdin:  {"code", "files": [{"id", "name", "path", "mime_type"}], "input", "output",
           "max_score", "limits": {"cpu_seconds", "memory_bytes", "file_size_bytes", "open_files", "threads"}}
  stdout: ONE JSON line, either
          {"ok": true, "score": <raw points>, "feedback": <str|null>}
          {"ok": false, "kind": "exception"|"memory"|"invalid-result", "error_type", "message", "traceback"}

The objects handed to `evaluate(workflow, context)` mirror the reference code
(DeepFlow-research/manager_agent_gym: schemas/domain/resource.py, the FileAccessor and
ValidationContext of core/evaluation/schemas/success_criteria.py, and engine/code_rule_executor.py),
because the shipped GDPval rules were written against that API.

Changing what a rule sees or how the answer is read? Bump PYTHON_HARNESS_VERSION in harness.ts,
so verdicts cached under the old behaviour are not reused.

This file is the trusted side of the sandbox boundary, but it is NOT the boundary: bubblewrap is.
The limits and the audit hook below are a second layer, not a substitute.
"""

import json
import linecache
import math
import os
import sys
import traceback
import uuid
import zipfile
from pathlib import Path

RULE_FILENAME = "<rule>"
MAX_FEEDBACK_CHARS = 20_000
MAX_TRACEBACK_CHARS = 20_000

# Keep the real stdout for the one result line; everything the rule prints (Python or C level)
# goes to stderr, so a chatty rule cannot corrupt the answer.
_result_stream = os.fdopen(os.dup(1), "w", encoding="utf-8")
os.dup2(2, 1)
sys.stdout = sys.stderr


def _emit(payload):
    # ASCII escapes keep lone surrogates in a rule's feedback from breaking the UTF-8 stream.
    _result_stream.write(json.dumps(payload, ensure_ascii=True, allow_nan=False) + "\n")
    _result_stream.flush()


def _fail(kind, error_type, message, tb=None):
    _emit(
        {
            "ok": False,
            "kind": kind,
            "error_type": error_type,
            "message": str(message)[:MAX_FEEDBACK_CHARS],
            "traceback": tb[-MAX_TRACEBACK_CHARS:] if tb else None,
        }
    )


def _apply_limits(limits):
    # prlimit sets the same limits from outside when it exists; setting them here as well means
    # a host without prlimit is still bounded before any rule code runs.
    import resource

    def cap(which, value):
        if value is None:
            return
        soft, hard = resource.getrlimit(which)
        value = int(value)
        new_hard = value if hard == resource.RLIM_INFINITY else min(hard, value)
        resource.setrlimit(which, (min(value, new_hard), new_hard))

    cap(resource.RLIMIT_AS, limits.get("memory_bytes"))
    cap(resource.RLIMIT_FSIZE, limits.get("file_size_bytes"))
    cap(resource.RLIMIT_CORE, 0)
    cap(resource.RLIMIT_NOFILE, limits.get("open_files"))
    threads = limits.get("threads")
    if threads is not None:
        # Set here, not by prlimit on the host: inside the sandbox's user namespace the kernel counts
        # the tasks of this namespace's uid alone. bwrap's pid 1 shares that uid, hence the one more.
        # (A root host is exempt from this limit; the runner's pids cgroup holds there.)
        cap(resource.RLIMIT_NPROC, int(threads) + 1)
    cpu = limits.get("cpu_seconds")
    if cpu is not None:
        # Soft limit sends SIGXCPU (the runner reports a timeout); the hard one is a backstop.
        soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
        want_hard = int(cpu) + 1 if hard == resource.RLIM_INFINITY else min(hard, int(cpu) + 1)
        resource.setrlimit(resource.RLIMIT_CPU, (min(int(cpu), want_hard), want_hard))


# --- missing libraries -------------------------------------------------------------------------
#
# Rules wrap file reading in `try/except Exception: return 0.0`, so a missing PDF or Excel library
# would silently become a zero. We record every import no finder could satisfy and, after the rule
# returns, turn the verdict into an error when a whole family of readers was wanted and absent.

READER_FAMILIES = {
    "PDF": (
        ("pdfplumber", "pdfminer", "pypdf", "PyPDF2", "fitz"),
        "install one: apt-get install python3-pdfminer (or python3-pypdf), or pip install pdfplumber",
    ),
    "DOCX": (("docx",), "apt-get install python3-docx"),
    "Excel": (
        ("openpyxl", "xlrd", "odf", "pyxlsb", "python_calamine"),
        "apt-get install python3-openpyxl python3-xlrd",
    ),
}

_missing_modules = set()
_probing = [False]


class _MissingModuleRecorder:
    """Last entry of sys.meta_path: reached only when no real finder found the module."""

    def find_spec(self, fullname, path=None, target=None):
        if not _probing[0]:
            _missing_modules.add(fullname.split(".")[0])
        return None


class MissingReaderError(BaseException):
    """A file reader needs a library this interpreter lacks.

    Derives from BaseException so that the rules' `except Exception` does not turn it into a zero.
    """


def _family_failures():
    problems = []
    for family, (modules, hint) in READER_FAMILIES.items():
        wanted = sorted(m for m in modules if m in _missing_modules)
        if wanted and not any(m in sys.modules for m in modules):
            problems.append(f"{family} reader library missing (tried {', '.join(wanted)}): {hint}")
    return problems


def _probe_import(name):
    _probing[0] = True
    try:
        __import__(name)
        return sys.modules[name]
    except ImportError:
        return None
    finally:
        _probing[0] = False


# --- the reference API ---------------------------------------------------------------------------

DOCUMENT_MIME_TYPES = (
    "application/pdf",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "application/msword",
)
SPREADSHEET_MIME_TYPES = (
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "application/vnd.ms-excel",
    "text/csv",
)


class Resource:
    """A file output, with the fields and properties of the reference `Resource` model."""

    def __init__(self, id, name, file_path, mime_type, description="", size_bytes=None):
        self.id = id
        self.name = name
        self.description = description
        self.file_path = file_path
        self.mime_type = mime_type
        self.size_bytes = size_bytes if size_bytes is not None else _size_of(file_path)
        self.file_format_metadata = None
        self.resource_role = "output"

    @property
    def resource_id(self):
        return self.id

    # Not in the reference model, but rules reach for them (`getattr(r, "path")`,
    # `output.extension`); answering beats an AttributeError that a rule would score as 0.
    @property
    def path(self):
        return self.file_path

    @property
    def extension(self):
        return self.file_extension

    @property
    def filename(self):
        return os.path.basename(self.file_path)

    @property
    def file_extension(self):
        return Path(self.file_path).suffix

    @property
    def is_text_format(self):
        return self.mime_type.startswith(("text/", "application/json"))

    @property
    def is_document(self):
        return self.mime_type in DOCUMENT_MIME_TYPES

    @property
    def is_spreadsheet(self):
        return self.mime_type in SPREADSHEET_MIME_TYPES

    @property
    def is_image(self):
        return self.mime_type.startswith("image/")

    @property
    def is_audio(self):
        return self.mime_type.startswith("audio/")

    @property
    def is_video(self):
        return self.mime_type.startswith("video/")

    def load_content(self):
        p = Path(self.file_path)
        if not p.exists():
            raise FileNotFoundError(f"File not found: {self.file_path}")
        return p.read_bytes()

    def load_text(self):
        if not self.is_text_format:
            raise ValueError(f"Cannot load text from non-text format: {self.mime_type}")
        p = Path(self.file_path)
        if not p.exists():
            raise FileNotFoundError(f"File not found: {self.file_path}")
        return p.read_text(encoding="utf-8")

    def pretty_print(self, max_preview_chars=5000):
        lines = [f"Resource: {self.name} (ID: {self.id}, type={self.mime_type}, role={self.resource_role})"]
        lines.append(f"  File path: {self.file_path}")
        if self.is_text_format:
            try:
                text = self.load_text()
                lines.append(f"  Content stats: words={len(text.split())}, chars={len(text)}")
                lines.append("  Content preview:")
                lines.extend(f"    {line}" for line in text[:max_preview_chars].splitlines()[:60])
            except Exception as e:  # noqa: BLE001 - mirrors the reference
                lines.append(f"  Content: <unable to load: {e}>")
        return "\n".join(lines)

    def __repr__(self):
        return f"Resource(id={self.id!s}, name={self.name!r}, mime_type={self.mime_type!r}, file_path={self.file_path!r})"


def _size_of(path):
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _key(resource_id):
    return str(resource_id).strip().lower()


_FIRST_SHEET = object()


class FileAccessor:
    """`context.files`: the reference FileAccessor's methods over the sandboxed files."""

    def __init__(self, resources):
        self._resources = {_key(r.id): r for r in resources}

    def get_resource(self, resource_id):
        resource = self._resources.get(_key(resource_id))
        if resource is None:
            raise ValueError(f"Resource {resource_id} not found")
        return resource

    def get_path(self, resource_id):
        return Path(self.get_resource(resource_id).file_path)

    def read_bytes(self, resource_id):
        return self.get_path(resource_id).read_bytes()

    def read_text(self, resource_id):
        return self.get_path(resource_id).read_text(encoding="utf-8")

    def read_excel(self, resource_id, sheet_name=_FIRST_SHEET, **kwargs):
        # The reference passes sheet_name=None to pandas (a dict of every sheet) while documenting
        # "reads first sheet if None"; the rules treat the result as one DataFrame, so an omitted
        # sheet reads the first sheet. An explicit value goes to pandas unchanged.
        import pandas as pd

        path = self.get_path(resource_id)
        return pd.read_excel(path, sheet_name=0 if sheet_name is _FIRST_SHEET else sheet_name, **kwargs)

    def read_csv(self, resource_id, **kwargs):
        import pandas as pd

        return pd.read_csv(self.get_path(resource_id), **kwargs)

    def read_pdf_text(self, resource_id):
        path = self.get_path(resource_id)
        # pdfplumber is what the reference uses; pdfminer.six underlies it and reads alike. pypdf
        # extracts a little differently, which is better than no verdict.
        pdfplumber = _probe_import("pdfplumber")
        if pdfplumber is not None:
            with pdfplumber.open(path) as pdf:
                return "\n\n".join(t for t in (page.extract_text() for page in pdf.pages) if t)
        if _probe_import("pdfminer.high_level") is not None:
            from pdfminer.high_level import extract_text

            pages = extract_text(str(path)).split("\f")
            return "\n\n".join(p.strip("\n") for p in pages if p.strip())
        for name in ("pypdf", "PyPDF2"):
            lib = _probe_import(name)
            if lib is not None:
                reader = lib.PdfReader(str(path))
                return "\n\n".join(t for t in (page.extract_text() for page in reader.pages) if t)
        _missing_modules.update(("pdfplumber", "pdfminer", "pypdf", "PyPDF2"))
        raise MissingReaderError(
            "read_pdf_text needs a PDF library and none is installed for this interpreter: "
            + READER_FAMILIES["PDF"][1]
        )

    def read_docx_text(self, resource_id):
        path = self.get_path(resource_id)
        docx = _probe_import("docx")
        if docx is not None:
            return "\n".join(p.text for p in docx.Document(str(path)).paragraphs)
        return _docx_paragraph_text(path)


_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"


def _docx_paragraph_text(path):
    """python-docx's `"\\n".join(p.text for p in Document(path).paragraphs)` with the stdlib.

    Same selection as python-docx 0.8: body-level paragraphs only (not tables), each the text of
    its direct runs, where <w:t> is text, <w:tab> a tab and <w:br>/<w:cr> a newline.
    """
    import xml.etree.ElementTree as ET

    with zipfile.ZipFile(path) as zf:
        root = ET.fromstring(zf.read("word/document.xml"))
    body = root.find(f"{_W}body")
    if body is None:
        return ""
    out = []
    for p in body.findall(f"{_W}p"):
        text = []
        for run in p.findall(f"{_W}r"):
            for child in run:
                if child.tag == f"{_W}t":
                    text.append(child.text or "")
                elif child.tag == f"{_W}tab":
                    text.append("\t")
                elif child.tag in (f"{_W}br", f"{_W}cr"):
                    text.append("\n")
        out.append("".join(text))
    return "\n".join(out)


class Task:
    def __init__(self, name, description, output_resource_ids):
        self.id = uuid.UUID(int=1)
        self.name = name
        self.description = description
        self.output_resource_ids = output_resource_ids
        self.timestep = 0


class Workflow:
    """The one-task workflow that produced the outputs; the task prompt is its goal."""

    def __init__(self, goal, resources):
        self.id = uuid.UUID(int=0)
        self.name = "rubric-evaluation"
        self.workflow_goal = goal
        self.resources = {r.id: r for r in resources}
        task = Task("deliverable", goal, [r.id for r in resources])
        self.tasks = {task.id: task}


class ValidationContext:
    def __init__(self, workflow):
        self.workflow = workflow
        self.timestep = 0
        self.current_preferences = None
        self.manager_actions = None
        self.communications_by_sender = None
        self.communications_by_thread = None
        self.preference_history = None
        self.stakeholder_profile = None
        self.resources_by_task = None
        self.all_resources = list(workflow.resources.values())
        self.agent_public_states = None
        self.agent_tool_usage_by_task = None
        self._files = FileAccessor(self.all_resources)
        self._explicit_resources = None

    @property
    def files(self):
        return self._files

    def set_evaluable_resources(self, resources):
        self._explicit_resources = resources

    def get_task_outputs(self, task_name=None):
        tasks = list(self.workflow.tasks.values())
        if task_name:
            task = next((t for t in tasks if t.name == task_name), None)
        else:
            task = sorted(tasks, key=lambda t: getattr(t, "timestep", 0))[-1] if tasks else None
        if task is None:
            return []
        return [self.workflow.resources[rid] for rid in task.output_resource_ids if rid in self.workflow.resources]

    def get_primary_output(self):
        outputs = self.get_task_outputs()
        return outputs[0] if outputs else None

    def get_all_outputs(self):
        out = []
        for task in self.workflow.tasks.values():
            out.extend(self.workflow.resources[rid] for rid in task.output_resource_ids if rid in self.workflow.resources)
        return out

    def get_evaluable_resources(self, task_name=None, include_intermediary=False):
        if self._explicit_resources is not None:
            return self._explicit_resources
        resources = self.get_task_outputs(task_name) if task_name else self.get_all_outputs()
        if not include_intermediary:
            resources = [r for r in resources if r.resource_role == "output"]
        return resources


# --- running the rule --------------------------------------------------------------------------

_BLOCKED_EVENTS = frozenset(
    ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty", "pty.spawn")
)


def _deny_processes(event, args):
    # Not a boundary (ctypes gets past any audit hook): the seccomp filter bubblewrap installs is
    # what stops a process from starting. This only turns the common attempts into a clear message.
    if event in _BLOCKED_EVENTS:
        raise PermissionError(f"{event} is not allowed in the rubric sandbox")


class _LazyModule:
    """A module imported on first attribute access (`pd.DataFrame`)."""

    def __init__(self, name):
        self.__name = name
        self.__module = None

    def __load(self):
        if self.__module is None:
            import importlib

            self.__module = importlib.import_module(self.__name)
        return self.__module

    def __getattr__(self, attribute):
        return getattr(self.__load(), attribute)

    def __dir__(self):
        return dir(self.__load())

    def __repr__(self):
        return repr(self.__load())


def _text_resource(output):
    # A text-only output is what the reference would have stored as a markdown file.
    directory = Path("/tmp/rubric-output")
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "output.md"
    path.write_text(output, encoding="utf-8")
    os.chmod(path, 0o444)
    return Resource(uuid.UUID(int=2), "output.md", str(path), "text/markdown", size_bytes=len(output.encode("utf-8")))


def _rule_traceback(exc):
    # Start at the rule's own frames; the harness frames above them say nothing to a rubric author.
    # A SyntaxError has no rule frame; its message already names the line.
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != RULE_FILENAME:
        tb = tb.tb_next
    return "".join(traceback.format_exception(type(exc), exc, tb))


def _as_number(value):
    if isinstance(value, (str, bytes)) or value is None:
        return None
    try:
        return float(value)
    except Exception:  # noqa: BLE001 - whatever __float__ raises, it is not a score
        return None


def _normalize(result):
    """(raw, feedback) from what evaluate returned, or raises ValueError saying why not."""
    feedback = None
    if isinstance(result, tuple):
        if len(result) == 2:
            value, feedback = result
            try:
                feedback = None if feedback is None else str(feedback)
            except Exception as e:  # noqa: BLE001 - a feedback object whose __str__ fails
                raise ValueError(f"evaluate returned feedback that cannot be turned into text: {e}") from e
        elif len(result) == 1:
            (value,) = result
        else:
            raise ValueError(f"evaluate returned a tuple of {len(result)} items; expected (score, feedback)")
    else:
        value = result
    number = _as_number(value)
    if number is None:
        raise ValueError(f"evaluate returned a non-numeric score: {value!r:.200}")
    if not math.isfinite(number):
        raise ValueError(f"evaluate returned a non-finite score: {number}")
    if feedback is not None and len(feedback) > MAX_FEEDBACK_CHARS:
        feedback = feedback[:MAX_FEEDBACK_CHARS] + "… (truncated)"
    return number, feedback


def main():
    try:
        request = json.loads(sys.stdin.buffer.read().decode("utf-8"))
        code = request["code"]
        files = request.get("files") or []
        goal = request.get("input") or ""
        output = request.get("output") or ""
    except Exception as e:  # noqa: BLE001 - any malformed request is the runner's bug, reported as such
        _fail("exception", "BadRequest", f"the harness could not read its request: {e}")
        return

    _apply_limits(request.get("limits") or {})

    import re
    import json as json_module

    # The reference executor pre-imports these into the rule's globals and some rules rely on it.
    # pandas is imported on first use: most rules only need `re`, and pandas costs half a second.
    exec_scope = {"__builtins__": __builtins__, "re": re, "json": json_module, "Path": Path}
    for alias, module in (("pd", "pandas"), ("np", "numpy")):
        exec_scope[alias] = exec_scope[module] = _LazyModule(module)

    sys.meta_path.append(_MissingModuleRecorder())
    sys.addaudithook(_deny_processes)

    try:
        resources = [
            Resource(uuid.UUID(f["id"]), f["name"], f["path"], f.get("mime_type") or "application/octet-stream")
            for f in files
        ]
        if not resources and output:
            resources = [_text_resource(output)]
        workflow = Workflow(goal, resources)
        context = ValidationContext(workflow)
        exec_scope.update(Resource=Resource, Workflow=Workflow, ValidationContext=ValidationContext)

        linecache.cache[RULE_FILENAME] = (len(code), None, code.splitlines(True), RULE_FILENAME)
        exec(compile(code, RULE_FILENAME, "exec"), exec_scope)
        evaluate = exec_scope.get("evaluate")
        if not callable(evaluate):
            _fail("exception", "MissingEvaluate", "the rule's code must define evaluate(workflow, context)")
            return
        result = evaluate(workflow, context)
        import inspect

        if inspect.iscoroutine(result):
            import asyncio

            result = asyncio.run(result)
    except MemoryError as e:
        detail = f": {e}" if str(e) else ""
        _fail("memory", type(e).__name__, f"the rule ran out of memory{detail}", _rule_traceback(e))
        return
    except MissingReaderError as e:
        _fail("exception", "MissingDependency", str(e), _rule_traceback(e))
        return
    except BaseException as e:  # noqa: BLE001 - SystemExit and friends are rule failures too
        _fail("exception", type(e).__name__, f"{type(e).__name__}: {e}", _rule_traceback(e))
        return

    problems = _family_failures()
    if problems:
        _fail("exception", "MissingDependency", "; ".join(problems))
        return
    try:
        raw, feedback = _normalize(result)
    except ValueError as e:
        _fail("invalid-result", "InvalidResult", str(e))
        return
    _emit({"ok": True, "score": raw, "feedback": feedback})


if __name__ == "__main__":
    main()
