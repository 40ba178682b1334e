"""A fork server inside a warm Coq toplevel: the C source of ``coqfork.so``, and the worker's requests to it.

``coqtop`` has no way to copy itself, and loading ``Arith`` and ``Lia`` is
most of what a small proof costs (0.2 s of a 0.25 s ``coqc``).  This library,
preloaded into ``coqtop`` (``LD_PRELOAD``), wraps ``chdir``: when a process
that serves (``PASSATK_COQFORK_FD`` names its control socket, descriptor 3)
executes ``Cd "/passatk-coqfork-serve".``, it has executed everything it was
given before, and it waits for requests on the control socket instead.  It
forks there, inside OCaml's ``Sys.chdir``, where the runtime lock is released
and no channel is locked (a fork inside ``read`` would copy stdin's lock,
held, into the child); ``_Fork`` skips OCaml's atfork handler, which would
mark the runtime lock as held.  The child returns from ``chdir`` and reads
its own standard input.  Requests:

``F``  fork a child that takes the descriptors sent with the request as its
       standard input, its standard output and error (one pipe, so the
       order of messages and errors is kept) and, if a third is sent, as
       descriptor 3.  ``kind`` ``S``: the child serves in turn when its input
       says ``Cd`` as above (its descriptor 3 is its own control socket): a warm toplevel
       for one statement's preamble, forked from the bare one (which
       reaps it once it has ended).  ``kind``
       ``A``: the child checks an attempt and ends with its input; it never
       serves, and before it reads anything it gets its own process group,
       ``RLIMIT_CPU`` (fork starts its CPU time at zero), ``RLIMIT_FSIZE`` 0 (no file of the sandbox can be written, so
       nothing it does is there for a later attempt to read) and death with
       its server.  Answer: ``P`` and the child's pid.
``D``  the child ``pid`` is done: its process group is killed and it is
       reaped.  Answer: ``R``, its wait status and CPU microseconds.

The server never reads what a child does, and a child is a copy of a server
that has executed only trusted text (Coq's prelude, a statement's
preamble), so no attempt can leave anything in a process that later forks
another attempt's child.  The library unlinks itself once loaded, so no
attempt can truncate the mapped file under its server.
"""

import os
import socket
import struct

__all__ = ["SERVE", "SOURCE", "ForkServer"]

SERVE = "/passatk-coqfork-serve"  # ``Cd`` to this path makes a toplevel that may serve start serving

SOURCE = (
    f'#define SERVE "{SERVE}"\n'
    + r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>


struct request { char op, kind, pad[2]; int32_t pid; uint32_t cpu; };

static int serve_fd = -1;
static pid_t servers[64];  /* serving children (kind S), reaped once they end: zombies count against pids.max */
static int n_servers;

__attribute__((constructor)) static void coqfork_init(void) {
    const char *fd = getenv("PASSATK_COQFORK_FD");
    const char *self = getenv("LD_PRELOAD");
    serve_fd = fd ? atoi(fd) : -1;
    if (self) unlink(self);
    unsetenv("LD_PRELOAD");  /* programs the toplevel may start do not load it */
}

static void reply(char op, int32_t a, int64_t b) {
    char buf[16];
    buf[0] = op;
    memcpy(buf + 4, &a, 4);
    memcpy(buf + 8, &b, 8);
    if (send(serve_fd, buf, sizeof buf, MSG_NOSIGNAL) != (ssize_t)sizeof buf) _exit(0);
}

static int high(int fd) { return fcntl(fd, F_DUPFD, 10); }

static void become_child(const struct request *rq, int *fds, int nfd) {
    pid_t parent = getppid();
    n_servers = 0;
    signal(SIGCHLD, SIG_DFL);
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(1);
    if (rq->kind == 'A') {
        struct rlimit r;
        if (rq->cpu) { r.rlim_cur = rq->cpu; r.rlim_max = rq->cpu + 1; setrlimit(RLIMIT_CPU, &r); }
        r.rlim_cur = r.rlim_max = 0;
        setrlimit(RLIMIT_FSIZE, &r);
        signal(SIGXFSZ, SIG_IGN);
    }
    int in = high(fds[0]), out = high(fds[1]), third = nfd > 2 ? high(fds[2]) : -1;
    for (int i = 0; i < nfd; i++) close(fds[i]);
    dup2(in, 0); dup2(out, 1); dup2(out, 2);
    if (third >= 0) dup2(third, 3); else close(3);
    close(in); close(out); if (third >= 0) close(third);
    serve_fd = rq->kind == 'S' ? 3 : -1;
}

/* Serve requests until one makes a child; return in that child (which then reads its own input). */
static void serve(void) {
    signal(SIGCHLD, SIG_DFL);
    for (;;) {
        struct request rq;
        int fds[3], nfd = 0;
        char control[CMSG_SPACE(sizeof fds)];
        struct iovec iov = {&rq, sizeof rq};
        struct msghdr msg = {0};
        msg.msg_iov = &iov; msg.msg_iovlen = 1; msg.msg_control = control; msg.msg_controllen = sizeof control;
        memset(&rq, 0, sizeof rq);
        for (int i = 0; i < n_servers; i++)
            if (waitpid(servers[i], NULL, WNOHANG) != 0) servers[i--] = servers[--n_servers];
        ssize_t got = recvmsg(serve_fd, &msg, MSG_CMSG_CLOEXEC);
        if (got <= 0) _exit(0);  /* the worker closed its end: nothing more to serve */
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
            if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
                nfd = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                memcpy(fds, CMSG_DATA(c), nfd * sizeof(int));
            }
        if (rq.op == 'F' && nfd >= 2) {
            /* no atfork handlers: OCaml's would mark the runtime lock as held, which this blocking section\n               (Sys.chdir) has released, and drop the channels' mutexes */
            pid_t pid = _Fork();
            if (pid == 0) { become_child(&rq, fds, nfd); return; }
            for (int i = 0; i < nfd; i++) close(fds[i]);
            if (pid > 0 && rq.kind == 'S' && n_servers < 64) servers[n_servers++] = pid;
            reply('P', pid, 0);
        } else if (rq.op == 'D' && rq.pid > 0) {
            int status = 0;
            struct rusage ru;
            kill(-rq.pid, SIGKILL);
            kill(rq.pid, SIGKILL);
            if (wait4(rq.pid, &status, 0, &ru) < 0) { status = -1; memset(&ru, 0, sizeof ru); }
            int64_t us = (int64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000 + ru.ru_utime.tv_usec + ru.ru_stime.tv_usec;
            reply('R', status, us);
        } else {
            for (int i = 0; i < nfd; i++) close(fds[i]);
            reply('E', 0, 0);
        }
    }
}

int chdir(const char *path) {
    static int (*real_chdir)(const char *);
    if (!real_chdir) real_chdir = (int (*)(const char *))dlsym(RTLD_NEXT, "chdir");
    if (serve_fd < 0 || strcmp(path, SERVE) != 0) return real_chdir(path);
    serve();
    return 0;
}
"""
)


_REQUEST = struct.Struct("=ccxxiI")
_REPLY = struct.Struct("=cxxxiq")


class ForkServer:
    """The worker's end of one serving toplevel's control socket, and the read end of its output (``held``).

    The output is kept open as long as the toplevel: its last prompt may come
    after the last answer read, and a closed pipe would kill it.
    """

    def __init__(self, sock, held):
        self.sock, self.held = sock, held

    def _ask(self, message, fds=(), timeout=30.0):
        self.sock.settimeout(timeout)
        try:
            socket.send_fds(self.sock, [message], list(fds))
            answer = self.sock.recv(_REPLY.size)
        except OSError as exc:
            raise ConnectionError(f"the warm Coq toplevel stopped answering ({exc})") from None
        if len(answer) != _REPLY.size:
            raise ConnectionError("the warm Coq toplevel ended")
        return _REPLY.unpack(answer)

    def fork(self, kind, stdin, output, third=None, cpu=0):
        """A child of ``kind`` "S" (serves once its input ends) or "A" (an attempt's check): its pid."""
        fds = [stdin, output] + ([third] if third is not None else [])
        op, pid, _ = self._ask(_REQUEST.pack(b"F", kind.encode(), 0, int(cpu)), fds)
        if op != b"P":
            raise ConnectionError("the warm Coq toplevel refused to fork")
        return pid

    def done(self, pid):
        """Kill what is left of child ``pid``'s process group and reap it: ``(wait status, CPU seconds)``."""
        op, status, micros = self._ask(_REQUEST.pack(b"D", b"A", pid, 0))
        if op != b"R":
            raise ConnectionError("the warm Coq toplevel did not reap its child")
        return status, micros / 1e6

    def close(self):
        """Close the control socket: the toplevel ends (and its children with it)."""
        self.sock.close()
        os.close(self.held)
