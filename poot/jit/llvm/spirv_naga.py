"""The naga post-pass: make LLVM's Vulkan-flavoured SPIR-V acceptable to naga (wgpu's shader translator)
without changing what the shader computes.

LLVM 22's SPIR-V backend emits valid Vulkan SPIR-V (`spirv-val --target-env vulkan1.3` accepts it), but
naga's SPIR-V frontend differs from it in three places, one of them silently (a fourth fix is for
spirv-val: integer zeros that LLVM spells OpConstantNull become OpConstant 0):

1. Resource names. The HLSL-style `llvm.spv.resource.handlefrombinding` takes the resource's name as an
   i8 string global; LLVM copies every such string into an unused Function-scope `OpVariable` of an
   `i8` array, which drags in `OpCapability Int8` and 8-bit constants naga refuses. They are dead: this
   pass removes unreferenced Function variables and then, to a fixpoint, the types and constants that
   only they used, with their names and decorations; `Int8`/`Int16` go when no such type is left.
2. Memory operands. LLVM writes `Aligned N` on OpLoad/OpStore; naga rejects the extra operands
   ("invalid operand count"). Alignment is a hint, so the operands are dropped.
3. Barrier semantics (the silent one). `llvm.spv.group.memory.barrier.with.group.sync` becomes
   `OpControlBarrier Workgroup Workgroup SequentiallyConsistent` with no storage-class bit, i.e. it
   orders no memory at all. naga then emits a bare execution barrier and a shared-memory reduction
   returns wrong numbers with no error. KIR's barrier orders workgroup and buffer memory, so every
   barrier whose semantics name no storage class gets AcquireRelease | WorkgroupMemory | UniformMemory.

The pass only needs to know which operand words of an instruction can be ids; where it does not know an
opcode it counts every operand as a possible reference, which can only keep a declaration alive, never
drop a used one.
"""
from __future__ import annotations

import struct

from ...errors import LoweringError

MAGIC = 0x07230203
POST_PASS_VERSION = 2                           # part of the SPIR-V target's cache identity

# opcodes
OP_SOURCE, OP_NAME, OP_MEMBER_NAME, OP_STRING, OP_LINE = 3, 5, 6, 7, 8
OP_EXTENSION, OP_EXT_INST_IMPORT, OP_MEMORY_MODEL, OP_ENTRY_POINT = 10, 11, 14, 15
OP_EXECUTION_MODE, OP_CAPABILITY, OP_TYPE_INT, OP_TYPE_FLOAT = 16, 17, 21, 22
OP_CONSTANT, OP_CONSTANT_NULL, OP_FUNCTION, OP_VARIABLE, OP_LOAD, OP_STORE = 43, 46, 54, 59, 61, 62
OP_DECORATE, OP_MEMBER_DECORATE, OP_COMPOSITE_EXTRACT = 71, 72, 81
OP_CONTROL_BARRIER, OP_MEMORY_BARRIER = 224, 225
OP_LOOP_MERGE, OP_SELECTION_MERGE, OP_MODULE_PROCESSED = 246, 247, 330
OP_DECORATE_STRING, OP_MEMBER_DECORATE_STRING = 5632, 5633

TYPE_OPS = frozenset(range(19, 39))            # OpTypeVoid .. OpTypePipe: result id in word 1
CONST_OPS = frozenset({41, 42, 43, 44, 46})     # True, False, Constant, ConstantComposite, ConstantNull
ANNOTATION_OPS = frozenset({OP_NAME, OP_MEMBER_NAME, OP_DECORATE, OP_MEMBER_DECORATE,
                            OP_DECORATE_STRING, OP_MEMBER_DECORATE_STRING})

STORAGE_FUNCTION = 7
DECORATION_SATURATED = 28
CAP_INT16, CAP_INT8 = 22, 39

SEM_ACQUIRE_RELEASE, SEM_UNIFORM_MEMORY, SEM_WORKGROUP_MEMORY = 0x8, 0x40, 0x100
SEM_STORAGE_CLASS_BITS = 0x1FC0                 # Uniform..Output memory bits
BARRIER_SEMANTICS = SEM_ACQUIRE_RELEASE | SEM_WORKGROUP_MEMORY | SEM_UNIFORM_MEMORY


# --- reading and writing the word stream ---------------------------------------------------------
def parse(data: bytes) -> tuple[list[int], list[list[int]]]:
    """SPIR-V bytes -> (5 header words, instructions as word lists with word 0 = count<<16 | opcode)."""
    if len(data) < 20 or len(data) % 4:
        raise LoweringError(f"not a SPIR-V module: {len(data)} bytes is not a whole number of words")
    words = list(struct.unpack(f"<{len(data) // 4}I", data))
    if words[0] != MAGIC:
        raise LoweringError(f"not a little-endian SPIR-V module (magic {words[0]:#010x})")
    insts, i = [], 5
    while i < len(words):
        count = words[i] >> 16
        if count == 0 or i + count > len(words):
            raise LoweringError(f"truncated SPIR-V instruction at word {i}")
        insts.append(words[i:i + count])
        i += count
    return words[:5], insts


def assemble(header: list[int], insts: list[list[int]]) -> bytes:
    flat = list(header)
    for ins in insts:
        flat.append((len(ins) << 16) | (ins[0] & 0xFFFF))
        flat.extend(ins[1:])
    return struct.pack(f"<{len(flat)}I", *flat)


def opcode(ins: list[int]) -> int:
    return ins[0] & 0xFFFF


def _string_words(ins: list[int], start: int) -> int:
    """How many words the nul-terminated literal string starting at ins[start] takes."""
    for k in range(start, len(ins)):
        if ins[k] >> 24 == 0:              # the last byte of this word is 0: the string ends here
            return k - start + 1
    return len(ins) - start


def declared_id(ins: list[int]) -> int | None:
    """The result id of a type, constant or variable declaration (the things this pass may delete)."""
    op = opcode(ins)
    if op in TYPE_OPS:
        return ins[1]
    if op in CONST_OPS or op == OP_VARIABLE:
        return ins[2]
    return None


def referenced_ids(ins: list[int]) -> list[int]:
    """Operand words of `ins` that may be ids it uses (never its own declared result)."""
    op = opcode(ins)
    if op in (OP_SOURCE, OP_STRING, OP_EXTENSION, OP_EXT_INST_IMPORT, OP_MEMORY_MODEL, OP_CAPABILITY,
              OP_TYPE_INT, OP_TYPE_FLOAT, OP_MODULE_PROCESSED):
        return []
    if op == OP_ENTRY_POINT:                # model, function, "name", interface ids...
        return [ins[2]] + ins[3 + _string_words(ins, 3):]
    if op in (OP_EXECUTION_MODE, OP_SELECTION_MERGE):
        return [ins[1]]
    if op == OP_LOOP_MERGE:
        return ins[1:3]
    if op == OP_LINE:
        return [ins[1]]
    if op == OP_CONSTANT:
        return [ins[1]]
    if op in TYPE_OPS:
        if op == 32:                        # OpTypePointer: storage class literal, pointee type
            return [ins[3]]
        if op in (23, 24):                  # OpTypeVector/Matrix: component type, literal count
            return [ins[2]]
        return ins[2:]
    if op in CONST_OPS or op == OP_VARIABLE:
        return [ins[1]] + (ins[4:] if op == OP_VARIABLE else ins[3:])
    if op == OP_FUNCTION:                   # result type, result, control literal, function type
        return [ins[1], ins[4]]
    if op == OP_LOAD:                       # result type, result, pointer, memory operands
        return [ins[1], ins[3]]
    if op == OP_STORE:                      # pointer, object, memory operands
        return ins[1:3]
    if op == OP_COMPOSITE_EXTRACT:          # result type, result, composite, literal indices
        return [ins[1], ins[3]]
    return ins[1:]                          # unknown layout: every word may be an id (conservative)


# --- the three fixes -------------------------------------------------------------------------------
def drop_dead_declarations(insts: list[list[int]]) -> list[list[int]]:
    """Remove unreferenced Function-scope variables, types and constants (to a fixpoint) with their
    names and decorations. Module-scope variables stay: they are the shader's interface."""
    while True:
        uses: dict[int, int] = {}
        for ins in insts:
            if opcode(ins) in ANNOTATION_OPS:
                continue
            for w in referenced_ids(ins):
                uses[w] = uses.get(w, 0) + 1
        dead = set()
        for ins in insts:
            rid = declared_id(ins)
            if rid is None or uses.get(rid):
                continue
            if opcode(ins) == OP_VARIABLE and ins[3] != STORAGE_FUNCTION:
                continue
            dead.add(rid)
        if not dead:
            return insts
        insts = [ins for ins in insts if declared_id(ins) not in dead
                 and not (opcode(ins) in ANNOTATION_OPS and ins[1] in dead)]


def drop_unused_small_int_capabilities(insts: list[list[int]]) -> list[list[int]]:
    widths = {ins[2] for ins in insts if opcode(ins) == OP_TYPE_INT}
    unused = {CAP_INT8} if 8 not in widths else set()
    if 16 not in widths:
        unused.add(CAP_INT16)
    return [ins for ins in insts if not (opcode(ins) == OP_CAPABILITY and ins[1] in unused)]


def strip_memory_operands(insts: list[list[int]]) -> list[list[int]]:
    out = []
    for ins in insts:
        op = opcode(ins)
        if op == OP_LOAD and len(ins) > 4:
            ins = ins[:4]
        elif op == OP_STORE and len(ins) > 3:
            ins = ins[:3]
        out.append(ins)
    return out


def fix_barrier_semantics(header: list[int], insts: list[list[int]]) -> list[list[int]]:
    """Give every barrier whose memory semantics name no storage class the semantics of KIR's barrier."""
    constants = {ins[2]: (ins[1], ins[3]) for ins in insts if opcode(ins) == OP_CONSTANT and len(ins) == 4}
    replacement: dict[int, int] = {}        # semantics type id -> id of the fixed constant
    new_consts = []
    for ins in insts:
        op = opcode(ins)
        pos = 3 if op == OP_CONTROL_BARRIER else 2 if op == OP_MEMORY_BARRIER else None
        if pos is None:
            continue
        if ins[pos] not in constants:
            raise LoweringError("a barrier's memory semantics is not a 32-bit constant; naga needs one")
        ty, value = constants[ins[pos]]
        if value & SEM_STORAGE_CLASS_BITS:
            continue
        if ty not in replacement:
            found = [cid for cid, (t, v) in constants.items() if t == ty and v == BARRIER_SEMANTICS]
            if found:
                replacement[ty] = found[0]
            else:
                replacement[ty] = header[3]
                header[3] += 1              # the id bound
                new_consts.append([(4 << 16) | OP_CONSTANT, ty, replacement[ty], BARRIER_SEMANTICS])
        ins[pos] = replacement[ty]
    if new_consts:
        first_function = next(i for i, ins in enumerate(insts) if opcode(ins) == OP_FUNCTION)
        insts = insts[:first_function] + new_consts + insts[first_function:]
    return insts


def drop_kernel_only_decorations(insts: list[list[int]]) -> list[list[int]]:
    """`fptosi.sat` (mathlib's range reduction) becomes a conversion decorated SaturatedConversion,
    a decoration only the OpenCL (Kernel) environment has; spirv-val rejects it under Vulkan."""
    return [ins for ins in insts if not (opcode(ins) == OP_DECORATE and ins[2] == DECORATION_SATURATED)]


def spell_null_integers(insts: list[list[int]]) -> list[list[int]]:
    """`OpConstantNull %int` -> `OpConstant %int 0`. LLVM shares one null for every integer zero, but an
    OpAccessChain index into a struct must be an OpConstant (spirv-val rejects the module otherwise)."""
    widths = {ins[1]: ins[2] for ins in insts if opcode(ins) == OP_TYPE_INT}
    out = []
    for ins in insts:
        if opcode(ins) == OP_CONSTANT_NULL and ins[1] in widths:
            ins = [OP_CONSTANT, ins[1], ins[2]] + [0] * (2 if widths[ins[1]] == 64 else 1)
        out.append(ins)
    return out


def fix_for_naga(data: bytes) -> bytes:
    """The whole post-pass: LLVM SPIR-V bytes in, naga-acceptable SPIR-V bytes out."""
    header, insts = parse(bytes(data))
    insts = drop_dead_declarations(insts)
    insts = drop_unused_small_int_capabilities(insts)
    insts = strip_memory_operands(insts)
    insts = spell_null_integers(insts)
    insts = drop_kernel_only_decorations(insts)
    insts = fix_barrier_semantics(header, insts)
    return assemble(header, insts)


__all__ = ["fix_for_naga", "parse", "assemble", "opcode", "BARRIER_SEMANTICS", "POST_PASS_VERSION"]
