"""Running a whole workgroup in one function, for targets without hardware work items (the CPU).

The group function loops over the workgroup's work items. A kernel without barriers is one loop
around the body (its locals are plain allocas: items run one after another). A kernel with barriers
is split at them (loop fission): every maximal barrier-free run of statements becomes its own loop
over the work items, so each item finishes the run before any item starts the next one -- which is
exactly what a barrier guarantees. Locals are privatized (one slot per work item) so values survive
from one run to the next; statements that contain a barrier (or a break/continue of a loop that
does) run once for the whole group, at *workgroup level*, where the conditions and loop bounds they
evaluate are uniform (the verifier proved it) and are read from work item 0's slots.

Supported: barriers at the top level, inside uniform if/else, for and while loops at any depth,
uniform break/continue of such loops, uniform early returns before a barrier and any returns after
the last one. Every kernel the verifier accepts falls in this subset; a break/continue inside a
barrier-free statement that targets a loop containing a barrier is lowered at workgroup level too.
"""
from __future__ import annotations

from poot.jit.kir.model import Barrier, Break, Continue, For, If, Return, While
from poot.jit.llvm.ir import reg_type
from poot.jit.llvm.lower import Lowering


def has_barrier(s) -> bool:
    if isinstance(s, Barrier):
        return True
    if isinstance(s, If):
        return any(map(has_barrier, s.then)) or any(map(has_barrier, s.orelse))
    if isinstance(s, (For, While)):
        return any(map(has_barrier, s.body))
    return False


def _free_jump(s) -> bool:
    """A Break/Continue in `s` that leaves `s`'s enclosing loop (not one nested inside `s`)."""
    if isinstance(s, (Break, Continue)):
        return True
    if isinstance(s, If):
        return any(map(_free_jump, s.then)) or any(map(_free_jump, s.orelse))
    return False


def _has_return(body) -> bool:
    for s in body:
        if isinstance(s, Return):
            return True
        if isinstance(s, If) and (_has_return(s.then) or _has_return(s.orelse)):
            return True
        if isinstance(s, (For, While)) and _has_return(s.body):
            return True
    return False


class WorkgroupLowering(Lowering):
    """Lowers the body of one workgroup; `ids[('group', a)]` must be set by the caller. Float operations
    are not contracted into FMAs: the CPU computes NumPy's numbers (lower.py's module docstring)."""

    contracts = False

    def emit_group(self) -> None:
        k = self.k
        wx, wy, wz = k.workgroup
        self.size = wx * wy * wz
        self.split = any(map(has_barrier, k.body))
        self.returns = self.split and _has_return(k.body)
        self.item = None
        if self.split:
            for v in k.locals:
                self.local_ptrs[v.name] = self.f.entry_op(f"alloca [{self.size} x {reg_type(v.dtype)}]",
                                                          hint=f"l.{v.name}.")
            if self.returns:
                self.done = self.f.entry_op(f"alloca [{self.size} x i8]", hint="done")
                self.f.emit(f"call void @llvm.memset.p0.i64(ptr {self.done}, i8 0, i64 {self.size}, i1 false)")
                self.m.declare("llvm.memset", "declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)")
        else:
            self.alloca_locals()
        self.wg_loops: list = []
        self.region(k.body)
        self.f.term("ret void")

    # -- hooks ----------------------------------------------------------------------------------
    def local_ptr(self, name: str) -> str:
        base = self.local_ptrs[name]
        if not self.split:
            return base
        ty = reg_type(self.local_types[name])
        return self.op(f"getelementptr inbounds [{self.size} x {ty}], ptr {base}, i64 0, i64 {self.item or 0}")

    def on_return(self) -> None:
        if self.item is None:                      # workgroup level, or a 1-item group: leave the group
            self.f.term("ret void")
            return
        if self.returns:
            p = self.op(f"getelementptr inbounds i8, ptr {self.done}, i64 {self.item}")
            self.f.emit(f"store i8 1, ptr {p}")
        self.f.br(self.item_next)

    def on_trap_exit(self) -> None:
        self.f.term("ret void")                    # a trap ends the whole group (the launch fails)

    def on_barrier(self) -> None:                  # only reached inside a run: impossible by construction
        raise AssertionError("barrier inside a work-item run")

    # -- workgroup level ------------------------------------------------------------------------
    def _needs_group_level(self, s) -> bool:
        return self.split and (has_barrier(s) or (bool(self.wg_loops) and _free_jump(s)))

    def region(self, body) -> None:
        run: list = []
        for s in body:
            if self._needs_group_level(s):
                self.item_run(run)
                run = []
                self.group_stmt(s)
            else:
                run.append(s)
        self.item_run(run)

    def group_stmt(self, s) -> None:
        saved_item, self.item = self.item, None
        if isinstance(s, If):
            c = self.expr(s.cond)
            then, other, done = self.f.label("gthen"), self.f.label("gelse"), self.f.label("gendif")
            self.f.cbr(c, then, other)
            self.f.start(then)
            self.region(s.then)
            self.f.br(done)
            self.f.start(other)
            self.region(s.orelse)
            self.f.br(done)
            self.f.start(done)
        elif isinstance(s, For):
            ty, count, var_at = self.for_header(s)
            kp = self.f.entry_op(f"alloca {ty}", hint="gk")
            self.f.emit(f"store {ty} 0, ptr {kp}")
            head, body, latch, done = (self.f.label(x) for x in ("gfor", "gbody", "glatch", "gendfor"))
            self.f.br(head)
            self.f.start(head)
            kv = self.op(f"load {ty}, ptr {kp}")
            self.f.cbr(self.op(f"icmp ult {ty} {kv}, {count}"), body, done)
            self.f.start(body)
            self.store_all_items(s.var, var_at(kv))
            self.wg_loops.append((done, latch))
            self.region(s.body)
            self.wg_loops.pop()
            self.f.br(latch)
            self.f.start(latch)
            k2 = self.op(f"load {ty}, ptr {kp}")
            self.f.emit(f"store {ty} {self.op(f'add nuw {ty} {k2}, 1')}, ptr {kp}")
            self.f.br(head)
            self.f.start(done)
        elif isinstance(s, While):
            head, body, done = self.f.label("gwhile"), self.f.label("gwbody"), self.f.label("gendwhile")
            self.f.br(head)
            self.f.start(head)
            self.f.cbr(self.expr(s.cond), body, done)
            self.f.start(body)
            self.wg_loops.append((done, head))
            self.region(s.body)
            self.wg_loops.pop()
            self.f.br(head)
            self.f.start(done)
        elif isinstance(s, Break):
            self.f.br(self.wg_loops[-1][0])
        elif isinstance(s, Continue):
            self.f.br(self.wg_loops[-1][1])
        elif isinstance(s, Barrier):
            pass                                   # the boundary between two item runs is the barrier
        else:
            raise AssertionError(f"{type(s).__name__} at workgroup level")
        self.item = saved_item

    def store_all_items(self, name: str, value: str) -> None:
        ty = reg_type(self.local_types[name])
        base = self.local_ptrs[name]
        for j in range(self.size) if self.size <= 8 else ():
            p = self.op(f"getelementptr inbounds [{self.size} x {ty}], ptr {base}, i64 0, i64 {j}")
            self.f.emit(f"store {ty} {value}, ptr {p}")
        if self.size > 8:
            ip = self.f.entry_op("alloca i64", hint="fill")
            self.f.emit(f"store i64 0, ptr {ip}")
            head, body, done = self.f.label("fill"), self.f.label("fillb"), self.f.label("filled")
            self.f.br(head)
            self.f.start(head)
            i = self.op(f"load i64, ptr {ip}")
            self.f.cbr(self.op(f"icmp ult i64 {i}, {self.size}"), body, done)
            self.f.start(body)
            p = self.op(f"getelementptr inbounds [{self.size} x {ty}], ptr {base}, i64 0, i64 {i}")
            self.f.emit(f"store {ty} {value}, ptr {p}")
            self.f.emit(f"store i64 {self.op(f'add i64 {i}, 1')}, ptr {ip}")
            self.f.br(head)
            self.f.start(done)

    # -- work-item runs -------------------------------------------------------------------------
    def item_run(self, stmts) -> None:
        if not stmts:
            return
        wx, wy, _ = self.k.workgroup
        saved_loops, self.loops = self.loops, []
        if self.size == 1:
            self.item = None
            for a in range(3):
                self.ids[("local", a)] = "0"
            self.stmts(stmts)
            self.loops = saved_loops
            return
        ip = self.f.entry_op("alloca i64", hint="it")
        self.f.emit(f"store i64 0, ptr {ip}")
        head, body, nxt, done = (self.f.label(x) for x in ("items", "item", "itemnext", "itemsdone"))
        self.f.br(head)
        self.f.start(head)
        it = self.op(f"load i64, ptr {ip}")
        self.f.cbr(self.op(f"icmp ult i64 {it}, {self.size}"), body, done)
        self.f.start(body)
        it32 = self.op(f"trunc i64 {it} to i32")
        self.ids[("local", 0)] = self.op(f"urem i32 {it32}, {wx}") if wx != self.size else it32
        self.ids[("local", 1)] = self.op(f"urem i32 {self.op(f'udiv i32 {it32}, {wx}')}, {wy}") if wy > 1 else "0"
        self.ids[("local", 2)] = self.op(f"udiv i32 {it32}, {wx * wy}") if wx * wy != self.size else "0"
        saved_item, saved_next = self.item, getattr(self, "item_next", None)
        self.item, self.item_next = it, nxt
        if self.returns:
            live, p = self.f.label("live"), self.op(f"getelementptr inbounds i8, ptr {self.done}, i64 {it}")
            self.f.cbr(self.op(f"icmp eq i8 {self.op(f'load i8, ptr {p}')}, 0"), live, nxt)
            self.f.start(live)
        self.stmts(stmts)
        self.f.br(nxt)
        self.f.start(nxt)
        self.f.emit(f"store i64 {self.op(f'add nuw i64 {it}, 1')}, ptr {ip}")
        self.f.br(head)
        self.f.start(done)
        self.item, self.item_next, self.loops = saved_item, saved_next, saved_loops
        if self.returns and _has_return(stmts):   # returns before a barrier are uniform: item 0 speaks for all
            alive, gone = self.f.label("alive"), self.f.label("gone")
            d0 = self.op(f"load i8, ptr {self.done}")
            self.f.cbr(self.op(f"icmp eq i8 {d0}, 0"), alive, gone)
            self.f.start(gone)
            self.f.term("ret void")
            self.f.start(alive)


__all__ = ["WorkgroupLowering", "has_barrier"]
