"""Fuzz plugins run in a sandbox: a child process that is handed data and hands back data.

Why: a plugin is the project's own Python, and the gate used to import it into its own process,
where a plugin could reach everything the gate is. One that imported the gate's runner, set
every check's result to PASS and stubbed the campaign passed a parser that accepts every tool
(tests/test_gate_pinned.py). Now the cases of a campaign with plugins are made in a child
process: it is sent the entries, the generator settings and the corpus seeds as JSON, and
answers with each case's entry, generator and fields as JSON, which the harness checks (a
known entry, a generator of that entry, exactly its fields) before it builds a case of them.
Nothing of the gate's state is in the child.

Before it loads a plugin the child gives up what generating a case never needs:

* on Linux x86-64, a seccomp filter, the kernel's, so it holds whatever runs in the process (C
  code, ctypes): no new process or program, no signal to another process, no ptrace or another
  process's memory, no socket, no file opened for writing or created, no file removed, renamed,
  linked or changed, no mount, namespace, kernel module, io_uring, clock or limit of another
  process. A refused call fails with EPERM;
* everywhere, an audit hook (PEP 578) that refuses the same at the Python level with a
  PermissionError naming the event, and any foreign call through ctypes.

What it keeps: reading files (a grammar file, and whatever the gate's user can read), its own
memory and CPU. A plugin that hangs is stopped after ``ANSWER_S`` with the gate's fuzz check
failing; its bytes are pinned by the gate's policy (``policy.fuzz_settings``), so a change to it
needs an acknowledgement, and review reads it. Without seccomp (another system), the audit hook
is all there is: CPython documents audit hooks as a way to watch, not a security boundary.
"""

from __future__ import annotations

import collections
import json
import os
import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from .generators import FuzzTarget, Generation, GeneratorError

PACKAGE_ROOT = Path(__file__).resolve().parents[2]  # the folder holding the extparity package
START_S = 120.0  # the child's start and the plugins' import
ANSWER_S = 120.0  # one chunk of cases
CHUNK = 400  # cases made per request: the campaign's batch
_BOOT = ("import sys; sys.path.insert(0, sys.argv[1]); "
         "from extparity.fuzz.sandbox import child_main; child_main()")
_EOF = object()


class Sandbox:
    """The harness's end: a child that made a ``Generation`` of the plugins, asked for chunks."""

    def __init__(self, refs: tuple[str, ...], root: Path, targets: dict[str, FuzzTarget],
                 chosen: dict[str, tuple[str, ...]], weights: dict[str, float], seed: int) -> None:
        self._stderr: collections.deque[str] = collections.deque(maxlen=8)
        self._lines: queue.Queue = queue.Queue()
        # -I: no user site, no PYTHON* variables, not the working directory on sys.path; the
        # harness's own sys.path is sent instead, so a plugin named as a module is the one found here.
        env = {key: os.environ[key] for key in ("PATH", "SYSTEMROOT") if key in os.environ}
        try:
            self._proc = subprocess.Popen([sys.executable, "-I", "-c", _BOOT, str(PACKAGE_ROOT)],
                                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                          env=env, text=True, encoding="ascii", errors="backslashreplace",
                                          bufsize=1, start_new_session=True)
        except OSError as error:
            raise GeneratorError(f"fuzz plugins: cannot start their sandbox: {error}") from None
        assert self._proc.stdin and self._proc.stdout and self._proc.stderr  # all three are pipes
        self._pipes = (self._proc.stdin, self._proc.stdout, self._proc.stderr)
        threading.Thread(target=self._read, args=(self._proc.stdout, True), daemon=True).start()
        threading.Thread(target=self._read, args=(self._proc.stderr, False), daemon=True).start()
        request = {"path": [PACKAGE_ROOT.as_posix(), *sys.path], "parent": os.getpid(), "refs": list(refs),
                   "root": str(root), "seed": seed, "weights": weights,
                   "chosen": {entry: list(names) for entry, names in chosen.items()},
                   "targets": {entry: {"module": t.entry.module, "export": t.entry.export, "args": list(t.entry.args),
                                       "seeds": [dict(fields) for fields in t.seeds], "dictionary": list(t.dictionary),
                                       "unseen": list(t.unseen)} for entry, t in targets.items()}}
        answer = self._ask(request, START_S, "load the plugins")
        self.generators: dict[str, list[str]] = answer["generators"]

    def make(self, start: int, count: int) -> list[tuple[str, str, dict[str, Any]] | GeneratorError]:
        """Cases ``start`` .. ``start + count - 1``, or up to the first that fails (then its error)."""
        answer = self._ask({"op": "make", "start": start, "count": count}, ANSWER_S, "make cases")
        made: list[tuple[str, str, dict[str, Any]] | GeneratorError] = [tuple(case) for case in answer["cases"]]
        if answer.get("error"):
            made.append(GeneratorError(str(answer["error"])))
        return made

    def close(self) -> None:
        if self._proc.poll() is None:
            try:
                os.killpg(self._proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                self._proc.kill()
            self._proc.wait()
        for pipe in self._pipes:
            try:
                pipe.close()
            except (OSError, ValueError):
                pass

    def _ask(self, request: dict, timeout_s: float, what: str) -> dict:
        try:
            self._pipes[0].write(json.dumps(request, ensure_ascii=True) + "\n")
            self._pipes[0].flush()
        except (OSError, ValueError):
            pass  # the child is gone: its exit is read below
        try:
            answer = self._lines.get(timeout=timeout_s)
        except queue.Empty:
            self.close()
            raise GeneratorError(f"fuzz plugins: their sandbox did not {what} within {timeout_s:.0f}s") from None
        if answer is _EOF:
            code = self._proc.wait()
            tail = " | ".join(list(self._stderr)[-3:])
            raise GeneratorError(f"fuzz plugins: their sandbox exited with code {code} before it could {what}"
                                 + (f": {tail}" if tail else ""))
        if not isinstance(answer, dict) or answer.get("refused"):
            self.close()
            raise GeneratorError(str(answer.get("refused") if isinstance(answer, dict) else
                                     f"fuzz plugins: their sandbox answered {str(answer)[:100]!r}"))
        return answer

    def _read(self, stream, answers: bool) -> None:
        for line in stream:
            if not answers:
                self._stderr.append(line.rstrip()[:300])
                continue
            try:
                self._lines.put(json.loads(line))
            except ValueError:
                self._stderr.append(f"stray output: {line.strip()[:200]}")
        if answers:
            self._lines.put(_EOF)


# ------------------------------------------------------------------ the child

def child_main() -> None:
    """Read the request, give up what generation never needs, load the plugins, answer chunks."""
    from ..project.config import Entry
    from .generators import with_plugins

    sys.dont_write_bytecode = True
    answers, requests = sys.stdout, sys.stdin
    sys.stdout = sys.stderr  # what a plugin prints must not corrupt the answers
    request = json.loads(requests.readline())
    sys.path[:] = request["path"]
    _die_with_parent(request["parent"])
    confine()

    def answer(**fields: Any) -> None:
        answers.write(json.dumps(fields, ensure_ascii=True) + "\n")
        answers.flush()

    try:
        targets = {entry: FuzzTarget(entry, Entry(entry, spec["module"], spec["export"], tuple(spec["args"])),
                                     tuple(spec["seeds"]), tuple(spec["dictionary"]), tuple(spec["unseen"]))
                   for entry, spec in request["targets"].items()}
        generation = Generation(with_plugins(request["refs"], Path(request["root"])), targets, request["chosen"],
                                request["weights"], request["seed"])
    except GeneratorError as refusal:
        answer(refused=str(refusal))
        return
    answer(generators={entry: [name for name, _ in pairs] for entry, pairs in generation.generators.items()})
    for line in requests:
        ask = json.loads(line)
        made: list[tuple[str, str, dict[str, Any]]] = []
        problem = None
        for index in range(ask["start"], ask["start"] + ask["count"]):
            try:
                case = generation.make(index)
            except GeneratorError as failure:
                problem = str(failure)
                break
            try:
                json.dumps(case[2])
            except (TypeError, ValueError) as failure:
                problem = f"generator {case[1]} returned fields that are not JSON on case {index}: {failure}"
                break
            made.append(case)
        answer(cases=made, error=problem)


def _die_with_parent(parent: int) -> None:
    """SIGKILL this process when the harness goes away, even if it is killed outright (Linux)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)


def confine() -> None:
    """The seccomp filter where the kernel has one for this machine, then the audit hook."""
    if sys.platform == "linux" and os.uname().machine == "x86_64":
        _seccomp_x86_64()
    sys.addaudithook(_refuse)


# What the audit hook refuses: events by prefix, and the few read-only ones of those families.
REFUSED_PREFIXES = ("os.", "subprocess.", "socket.", "ctypes.", "shutil.", "pty.", "fcntl.", "resource.", "signal.",
                    "tempfile.", "webbrowser.", "sqlite3.", "syslog.", "winreg.", "_winapi.", "msvcrt.", "urllib.",
                    "http.", "ftplib.", "smtplib.", "poplib.", "imaplib.", "nntplib.", "telnetlib.")
READ_ONLY_EVENTS = {"os.listdir", "os.scandir", "os.walk", "os.fwalk", "os.getxattr", "os.listxattr",
                    "signal.signal"}
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


def _refuse(event: str, args: tuple) -> None:
    if event == "open":
        mode, flags = (args[1], args[2]) if len(args) >= 3 else (None, 0)
        if (isinstance(mode, str) and set(mode) & set("wax+")) or (isinstance(flags, int) and flags & WRITE_FLAGS):
            raise PermissionError(f"the fuzz sandbox refuses to open {args[0]!r} for writing")
    elif event.startswith(REFUSED_PREFIXES) and event not in READ_ONLY_EVENTS:
        raise PermissionError(f"the fuzz sandbox refuses {event}")


# x86-64 system calls the filter refuses (asm/unistd_64.h). The open calls are refused only with
# a flag that writes or creates; ioctl only for the requests that push input to a terminal
# (TIOCSTI, TIOCLINUX); prlimit64 only on another process.
_REFUSED_CALLS = {
    "process": (56, 57, 58, 59, 322, 435),  # clone fork vfork execve execveat clone3
    "other processes": (62, 200, 234, 129, 297, 101, 310, 311, 434, 438, 424, 141, 142, 144, 203, 314, 251, 256, 279,
                        440, 312, 160),  # kill tkill tgkill rt_(tg)sigqueueinfo ptrace process_vm_* pidfd_* priority sched io
    "network and shared memory": (41, 53, 29, 30, 31, 64, 65, 66, 220, 68, 69, 71),  # socket socketpair shm* sem* msg*
    "files": (85, 76, 77, 82, 264, 316, 83, 258, 84, 86, 265, 87, 263, 88, 266, 90, 91, 268, 452, 92, 93, 94, 260, 133,
              259, 132, 235, 261, 280, 188, 189, 190, 197, 198, 199, 437, 303, 304),  # creat truncate rename mkdir ... openat2
    "system": (165, 166, 155, 161, 272, 308, 425, 426, 427, 321, 298, 175, 313, 176, 246, 320, 169, 323, 248, 249, 250,
               164, 227, 159, 305, 170, 171, 163, 167, 168, 103, 153, 172, 173, 179, 428, 429, 430, 431, 432, 433, 442),
}
_OPEN, _OPENAT, _IOCTL, _PRLIMIT64 = 2, 257, 16, 302
_PUSH_INPUT = (0x5412, 0x541C)  # TIOCSTI, TIOCLINUX
_O_TMPFILE = 0x400000


def _seccomp_x86_64() -> None:
    import ctypes

    ld, jeq, jset, ret = 0x20, 0x15, 0x45, 0x06  # BPF_LD|W|ABS, BPF_JMP|JEQ|K, BPF_JMP|JSET|K, BPF_RET|K
    allow, deny = 0x7FFF0000, 0x00050000 | 1  # SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO | EPERM

    def arg(n: int) -> int:  # the low 32 bits of argument n in struct seccomp_data (little-endian)
        return 16 + 8 * n

    program: list[tuple] = [(ld, 0, 0, 4), (jeq, 1, 0, 0xC000003E), (ret, 0, 0, deny),  # AUDIT_ARCH_X86_64 only
                            (ld, 0, 0, 0), (0x35, 0, 1, 0x40000000), (ret, 0, 0, deny)]  # JGE: the x32 ABI
    for number in sorted({n for numbers in _REFUSED_CALLS.values() for n in numbers}):
        program += [(jeq, 0, 1, number), (ret, 0, 0, deny)]
    write = WRITE_FLAGS | _O_TMPFILE
    for number, at in ((_OPEN, 1), (_OPENAT, 2)):
        program += [(jeq, 0, 4, number), (ld, 0, 0, arg(at)), (jset, 0, 1, write), (ret, 0, 0, deny), (ret, 0, 0, allow)]
    program += [(jeq, 0, 5, _IOCTL), (ld, 0, 0, arg(1)), (jeq, 1, 0, _PUSH_INPUT[0]), (jeq, 0, 1, _PUSH_INPUT[1]),
                (ret, 0, 0, deny), (ret, 0, 0, allow)]
    program += [(jeq, 0, 3, _PRLIMIT64), (ld, 0, 0, arg(0)), (jeq, 1, 0, 0), (ret, 0, 0, deny)]
    program += [(ret, 0, 0, allow)]

    class Instruction(ctypes.Structure):
        _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint)]

    class Program(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(Instruction))]

    instructions = (Instruction * len(program))(*[Instruction(*step) for step in program])
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong]
    if libc.prctl(38, 1, None, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS, which an unprivileged filter needs
        raise OSError(ctypes.get_errno(), "the fuzz sandbox cannot set no_new_privs")
    filter_program = Program(len(program), instructions)
    if libc.prctl(22, 2, ctypes.byref(filter_program), 0, 0) != 0:  # PR_SET_SECCOMP, SECCOMP_MODE_FILTER
        raise OSError(ctypes.get_errno(), "the fuzz sandbox cannot install its seccomp filter")
