"""Confined execution of generated code: one policy, one fork server, one child skeleton.

Three kinds of process run code a model wrote: a tool under its procedural tests
(verification.sandbox), a tool serving an episode (mcp_servers.pool) and a chain program
(tasks.execute). All three are forks of a template process started by `forkserver.ForkServer`;
each fork runs `child.run` (close every other descriptor, lock down, then serve) under a `Policy`
(`policy.py`) whose rules are the one `RULES` object. They differ only in named parameters:
what database the process holds ("scratch", "persistent", "none"), whether each process gets a
uid of its own, and its limits.

Layers, outermost first; what each stops, and what it assumes:

- namespaces (`launch.py`): bubblewrap gives the template's tree new mount, PID, IPC, UTS and
  network namespaces (and a user namespace when not started by root). Only the interpreter, its
  libraries, this package and the serving package, time zones, and folders handed over on purpose
  are visible, read-only; /tmp is a private size-limited tmpfs; the tree dies with its parent.
  Stops: reading host files by path, seeing or signalling host processes, any network, IPC with
  host processes. Assumes bubblewrap is installed and user namespaces (or root) are allowed;
  without it the server says so and the inner layers still apply.
- cgroup (`cgroup.py`): memory and task limits over the whole tree. Stops: a tree exhausting the
  machine's memory or process table. Assumes a writable cgroup v2 (or v1) hierarchy.
- identity (`identity.py`): a fresh unprivileged uid (per tree, or per episode process), no
  groups, no capabilities at all. Stops: signalling, tracing, reading the /proc files or the files
  of the parent, of other episodes and of other users. Assumes the parent runs as root; otherwise
  the process keeps the parent's uid and the layers below keep processes apart.
- rlimits (`lockdown.set_limits`): address space, file size, open files, tasks, no core dumps.
  Stops: one process exhausting memory or disk before the cgroup notices.
- no-new-privileges and non-dumpable (`lockdown.py`): nothing gains privileges through exec; no
  process, even of the same uid, opens another's /proc/<pid>/mem or traces it.
- Landlock (`landlock.py`, ABI 1-6): reads only beneath the policy's readable paths, writes only
  in the process's own folder (regular files and folders: no devices, sockets, links or renames
  out), no TCP bind or connect, no signals to and no abstract Unix sockets of processes outside
  its own domain. Stops the filesystem and network reach the namespaces stop, again, where
  bubblewrap is missing. Assumes a kernel with Landlock; `probe.py` checks that it bites.
- seccomp (`seccomp.py`): one BPF deny-list (policy.DENIED_SYSCALLS): no new processes or
  threads, no exec, no sockets, no ptrace or access to other processes' memory (process_vm_*,
  process_madvise, kcmp, pidfd_*), no namespaces or mounts, no keyrings, BPF, io_uring, kernel
  modules, System V IPC or POSIX message queues, no mknod or personality, none of the machine's
  own controls (reboot, swap, acct, quotas, syslog); kill and tgkill only at the caller's own
  process, tkill never; no terminal input injection (TIOCSTI); any other architecture is killed.
  Stops the kernel surface the code has no use for. Assumes x86_64.
- SQLite authorizer (`database.py`): no ATTACH (nor VACUUM INTO, which attaches), no
  load_extension, readfile, writefile, edit or fts3_tokenizer, whoever registered them; where the
  runtime owns the transaction, no PRAGMA or BEGIN/COMMIT while generated code runs; defensive
  mode. Stops SQL reaching other database files or loading code. Assumes nothing: the layers
  above stop the same again if a tool removes the authorizer, which it can.
- courtesy layers (`guard.py`, `generated.py`): the static guard refuses imports outside
  policy.ALLOWED_MODULES and escape hatches (eval, open, dunder attributes) before anything runs;
  at run time generated code gets builtins without them, an import guard with the same list (and
  the modules the standard library's C code imports lazily, so strftime and strptime work), and a
  network stub. They make refusals clear; they are not the boundary: code reaches `os` through
  allowed modules' attributes, which is why the layers above exist.

What comes back is not trusted either: frames (`protocol.py`) carry random request ids and size
caps, and a late, oversized, malformed, unrequested or misaddressed reply costs the process that
sent it, never the parent. Verdicts and rewards are decided by the parent from raw outcomes.

`probe.require` refuses to run generated code where this machine gives neither a filesystem
boundary (namespaces or Landlock) nor seccomp, unless WORLDSMITH_UNSAFE_NO_CONFINEMENT=1.
This package imports nothing of the project above it.
"""
