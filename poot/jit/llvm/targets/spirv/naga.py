"""The naga post-pass: make LLVM's Vulkan-flavoured SPIR-V acceptable to naga (wgpu's shader translator)
without changing what the shader computes.

LLVM 22's SPIR-V backend emits valid Vulkan SPIR-V (`spirv-val --target-env vulkan1.3` accepts it), but
naga's SPIR-V frontend differs from it in three places, one of them silently (a fourth fix is for
spirv-val: integer zeros that LLVM spells OpConstantNull become OpConstant 0; the other rewrites each say
why in their docstrings, e.g. constant 64-bit access-chain indices, which naga reads as u32 only):

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

from poot.errors import LoweringError

MAGIC = 0x07230203
POST_PASS_VERSION = 10                          # part of the SPIR-V target's cache identity

# opcodes
OP_SOURCE, OP_NAME, OP_MEMBER_NAME, OP_STRING, OP_LINE = 3, 5, 6, 7, 8
OP_EXTENSION, OP_EXT_INST_IMPORT, OP_EXT_INST, OP_MEMORY_MODEL, OP_ENTRY_POINT = 10, 11, 12, 14, 15
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


def id_positions(ins: list[int]) -> list[int]:
    """Word positions in `ins` that may hold ids it uses (never its own declared result)."""
    op, n = opcode(ins), len(ins)
    if op in (OP_SOURCE, OP_STRING, OP_EXTENSION, OP_EXT_INST_IMPORT, OP_MEMORY_MODEL, OP_CAPABILITY,
              OP_TYPE_INT, OP_TYPE_FLOAT, OP_MODULE_PROCESSED):
        return []
    if op == OP_ENTRY_POINT:                # model, function, "name", interface ids...
        return [2] + list(range(3 + _string_words(ins, 3), n))
    if op in (OP_EXECUTION_MODE, OP_SELECTION_MERGE, OP_LINE):
        return [1]
    if op == OP_LOOP_MERGE:
        return [1, 2]
    if op == OP_CONSTANT:
        return [1]
    if op in TYPE_OPS:
        if op == 32:                        # OpTypePointer: storage class literal, pointee type
            return [3]
        if op in (23, 24):                  # OpTypeVector/Matrix: component type, literal count
            return [2]
        return list(range(2, n))
    if op in CONST_OPS or op == OP_VARIABLE:
        return [1] + list(range(4 if op == OP_VARIABLE else 3, n))
    if op == OP_FUNCTION:                   # result type, result, control literal, function type
        return [1, 4]
    if op in (OP_LOAD, OP_COMPOSITE_EXTRACT):   # result type, result, pointer/composite, literals
        return [1, 3]
    if op == OP_STORE:                      # pointer, object, memory operands
        return [1, 2]
    if op == OP_EXT_INST:                   # result type, result, set, literal instruction, operands
        return [1, 3] + list(range(5, n))
    return list(range(1, n))                # unknown layout: every word may be an id (conservative)


def referenced_ids(ins: list[int]) -> list[int]:
    return [ins[p] for p in id_positions(ins)]


# opcodes without a result id, and those whose result id is word 1 (no result type)
_NO_RESULT = frozenset({0, 2, 3, 4, 5, 6, 8, 10, 14, 15, 16, 17, 56, 62, 63, 64, 71, 72, 74, 75, 224, 225, 228,
                        246, 247, 249, 250, 251, 252, 253, 254, 255, 256, 257, 317, 330, 331, 332, 5632, 5633})
_RESULT_FIRST = TYPE_OPS | {7, 11, 73, 248}     # types, OpString, OpExtInstImport, OpDecorationGroup, OpLabel


def duplicate_ids(data: bytes) -> set[int]:
    """Result ids defined more than once (LLVM's SPIR-V backend can emit such modules; spirv_worker.py)."""
    seen, dups = set(), set()
    for ins in parse(bytes(data))[1]:
        op = opcode(ins)
        if op in _NO_RESULT or op == 39:
            continue
        pos = 1 if op in _RESULT_FIRST else 2
        if pos < len(ins):
            (dups if ins[pos] in seen else seen).add(ins[pos])
    return dups


def _string(ins: list[int], start: int) -> bytes:
    return struct.pack(f"<{len(ins) - start}I", *ins[start:]).split(b"\0", 1)[0]


def _string_as_words(text: bytes) -> list[int]:
    padded = text + b"\0" * (4 - len(text) % 4)
    return list(struct.unpack(f"<{len(padded) // 4}I", padded))


def rename_entry(data: bytes, old: str, new: str) -> bytes:
    """The module with its entry point (OpEntryPoint and the function's OpName) `old` called `new`."""
    header, insts = parse(bytes(data))
    was, now = old.encode(), _string_as_words(new.encode())
    for k, ins in enumerate(insts):
        op = opcode(ins)
        if op == OP_ENTRY_POINT and _string(ins, 3) == was:
            insts[k] = ins[:3] + now + ins[3 + _string_words(ins, 3):]
        elif op == OP_NAME and _string(ins, 2) == was:
            insts[k] = ins[:2] + now
    return assemble(header, insts)


# --- the fixes -------------------------------------------------------------------------------
def drop_dead_declarations(insts: list[list[int]]) -> list[list[int]]:
    """Remove unreferenced Function-scope variables, types and constants (to a fixpoint) with their
    names and decorations. Module-scope variables stay: they are the shader's interface. One count of
    uses, lowered as declarations die (a rescan per round took ~20 ms for a kernel with mathlib)."""
    uses: dict[int, int] = {}
    refs = []                               # per instruction, the ids it uses (annotations: none)
    declares: dict[int, list[int]] = {}     # removable id -> the instructions declaring it
    for k, ins in enumerate(insts):
        r = () if opcode(ins) in ANNOTATION_OPS else referenced_ids(ins)
        refs.append(r)
        for w in r:
            uses[w] = uses.get(w, 0) + 1
        rid = declared_id(ins)
        if rid is not None and not (opcode(ins) == OP_VARIABLE and ins[3] != STORAGE_FUNCTION):
            declares.setdefault(rid, []).append(k)
    work = [rid for rid in declares if not uses.get(rid)]
    dead = set()
    while work:
        rid = work.pop()
        if rid in dead:
            continue
        dead.add(rid)
        for k in declares[rid]:
            for w in refs[k]:
                uses[w] -= 1
                if not uses[w] and w in declares:
                    work.append(w)
    if not dead:
        return insts
    return [ins for ins in insts if declared_id(ins) not in dead
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


def merges_before_branches(insts: list[list[int]]) -> list[list[int]]:
    """A merge instruction must come right before its block's branch; LLVM's scheduler sometimes leaves
    instructions of the block between the two. Merges declare structure and compute nothing, so those
    instructions move above the merge."""
    out, held = [], None
    for ins in insts:
        op = opcode(ins)
        if op in (OP_SELECTION_MERGE, OP_LOOP_MERGE):
            held = ins
            continue
        if held is not None and op in (249, 250, OP_SWITCH):
            out.append(held)
            held = None
        out.append(ins)
    return out


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


OP_IS_NAN, OP_ORDERED, OP_UNORDERED, OP_LOGICAL_OR, OP_LOGICAL_NOT = 156, 162, 163, 166, 168


def spell_unordered_compares(header: list[int], insts: list[list[int]]) -> list[list[int]]:
    """`fcmp uno/ord` become OpUnordered/OpOrdered, which only the Kernel (OpenCL) capability has:
    spell them with OpIsNan (and OpLogicalOr / OpLogicalNot), which Shader has."""
    def fresh() -> int:
        header[3] += 1
        return header[3] - 1
    out = []
    for ins in insts:
        op = opcode(ins)
        if op not in (OP_ORDERED, OP_UNORDERED):
            out.append(ins)
            continue
        ty, result, a, b = ins[1:5]
        nan = fresh() if a == b and op == OP_ORDERED else (result if a == b else fresh())
        out.append([OP_IS_NAN, ty, nan, a])
        if a != b:
            nan_b, either = fresh(), result if op == OP_UNORDERED else fresh()
            out += [[OP_IS_NAN, ty, nan_b, b], [OP_LOGICAL_OR, ty, either, nan, nan_b]]
            nan = either
        if op == OP_ORDERED:
            out.append([OP_LOGICAL_NOT, ty, result, nan])
    return out


OP_BITCAST, OP_CONVERT_F_TO_S, OP_CONVERT_S_TO_F, OP_S_CONVERT, OP_F_CONVERT = 124, 110, 111, 114, 115
OP_SWITCH = 251
# signed opcode -> (operand positions that are signed, result is signed)
_SIGNED_OPS = {OP_CONVERT_F_TO_S: ((), True), OP_CONVERT_S_TO_F: ((3,), False), OP_S_CONVERT: ((3,), True),
               135: ((3, 4), True), 138: ((3, 4), True), 139: ((3, 4), True),   # SDiv, SRem, SMod
               195: ((3,), True)}                                                # ShiftRightArithmetic
# GLSL.std.450 instructions on signed integers: SAbs, SSign, SMin, SMax, SClamp, FindSMsb
_SIGNED_GLSL = {5: (5,), 7: (5,), 39: (5, 6), 42: (5, 6), 45: (5, 6, 7), 74: (5,)}


def sign_integer_operands(header: list[int], insts: list[list[int]]) -> list[list[int]]:
    """LLVM types every integer unsigned (`OpTypeInt N 0`) and leaves signedness to the opcode, as SPIR-V
    allows; naga instead follows the operand type, so OpSDiv, OpSRem, OpShiftRightArithmetic,
    OpConvertSToF, OpConvertFToS, SMin, SAbs... on `uint` silently compute unsigned. Give those signed
    operands and results, through OpBitcast to and from `OpTypeInt N 1`."""
    glsl = next((ins[1] for ins in insts if opcode(ins) == OP_EXT_INST_IMPORT
                 and b"GLSL.std.450" in struct.pack(f"<{len(ins) - 2}I", *ins[2:])), None)
    unsigned = {ins[1]: ins[2] for ins in insts if opcode(ins) == OP_TYPE_INT and ins[3] == 0}
    signed = {ins[2]: ins[1] for ins in insts if opcode(ins) == OP_TYPE_INT and ins[3] == 1}
    type_of = {ins[2]: ins[1] for ins in insts if len(ins) > 2 and opcode(ins) not in _NO_RESULT
               and opcode(ins) not in _RESULT_FIRST}
    new_types: list[list[int]] = []

    def fresh() -> int:
        header[3] += 1
        return header[3] - 1

    def signed_type(t: int) -> int:
        width = unsigned[t]
        if width not in signed:
            signed[width] = fresh()
            new_types.append([OP_TYPE_INT, signed[width], width, 1])
        return signed[width]

    out = []
    for ins in insts:
        op = opcode(ins)
        if op in _SIGNED_OPS:
            operands, result = _SIGNED_OPS[op]
        elif op == OP_EXT_INST and ins[3] == glsl and ins[4] in _SIGNED_GLSL:
            operands, result = _SIGNED_GLSL[ins[4]], True
        else:
            out.append(ins)
            continue
        ins = list(ins)
        for pos in operands:
            t = type_of.get(ins[pos])
            if t in unsigned:
                x = fresh()
                out.append([OP_BITCAST, signed_type(t), x, ins[pos]])
                ins[pos] = x
        after = None
        if result and ins[1] in unsigned:
            original_type, original = ins[1], ins[2]
            ins[1], ins[2] = signed_type(original_type), fresh()
            after = [OP_BITCAST, original_type, original, ins[2]]
        out.append(ins)
        if after:
            out.append(after)
    if new_types:
        first_type = next(i for i, ins in enumerate(out) if opcode(ins) in TYPE_OPS)
        out[first_type:first_type] = new_types
    return out


def _nonfinite(words: list[int], width: int) -> bool:
    if width == 32:
        return words[0] & 0x7F800000 == 0x7F800000
    if width == 64:
        return (words[1] if len(words) > 1 else 0) & 0x7FF00000 == 0x7FF00000
    return words[0] & 0x7C00 == 0x7C00


def materialize_nonfinite_floats(header: list[int], insts: list[list[int]]) -> list[list[int]]:
    """naga refuses NaN and infinite float literals (WGSL has none). Each function that uses one gets it
    at run time instead: OpBitcast of the float32 bit pattern (then OpFConvert to half or double, which
    keeps infinities and NaN), at the top of its first block; the literal is then dead."""
    floats = {ins[1]: ins[2] for ins in insts if opcode(ins) == OP_TYPE_FLOAT}
    bad = {ins[2]: (ins[1], ins[3:]) for ins in insts
           if opcode(ins) == OP_CONSTANT and ins[1] in floats and _nonfinite(ins[3:], floats[ins[1]])}
    if not bad:
        return insts
    uint = next((ins[1] for ins in insts if opcode(ins) == OP_TYPE_INT and ins[2] == 32 and ins[3] == 0), None)
    f32 = next((t for t, w in floats.items() if w == 32), None)

    def fresh() -> int:
        header[3] += 1
        return header[3] - 1
    new_decls = []
    if uint is None:
        uint = fresh()
        new_decls.append([OP_TYPE_INT, uint, 32, 0])
    if f32 is None:
        f32 = fresh()
        new_decls.append([OP_TYPE_FLOAT, f32, 32])
    bits = {}                               # constant id -> (uint constant id, float32 pattern)
    for cid, (ty, words) in bad.items():
        w = floats[ty]
        nan = not (words[0] & 0x7FFFFF if w == 32 else
                   (words[1] & 0xFFFFF) | words[0] if w == 64 else words[0] & 0x3FF) == 0
        negative = (words[-1] >> (31 if w != 16 else 15)) & 1
        pattern = 0x7FC00000 if nan else (0xFF800000 if negative else 0x7F800000)
        bits[cid] = (fresh(), pattern)
        new_decls.append([OP_CONSTANT, uint, bits[cid][0], pattern])
    out, rename, in_function, placed = [], {}, False, False
    for k, ins in enumerate(insts):
        op = opcode(ins)
        if op == OP_FUNCTION:
            in_function, placed, rename = True, False, {}
            used = {ins2[p] for ins2 in insts[k + 1:next(j for j in range(k + 1, len(insts))
                                                      if opcode(insts[j]) == 56)]
                    for p in id_positions(ins2) if ins2[p] in bad}
        if in_function and not placed and op not in (OP_FUNCTION, 55, 248, OP_VARIABLE):
            for cid in sorted(used):        # first instruction after the label and the variables
                ty = bad[cid][0]
                as_f32 = fresh()
                out.append([OP_BITCAST, f32, as_f32, bits[cid][0]])
                if floats[ty] != 32:
                    rename[cid] = fresh()
                    out.append([OP_F_CONVERT, ty, rename[cid], as_f32])
                else:
                    rename[cid] = as_f32
            placed = True
        if in_function and rename and op != OP_SWITCH:
            ins = list(ins)
            for p in id_positions(ins):
                ins[p] = rename.get(ins[p], ins[p])
        if op == 56:
            in_function = False
        out.append(ins)
    return _declared(out, new_decls)


def _declared(out: list, new_decls: list) -> list:
    """`out` with the declarations `new_decls` placed as SPIR-V orders them: the new types before the
    module's first type, the new constants after its last type or constant."""
    first_type = next(i for i, ins in enumerate(out) if opcode(ins) in TYPE_OPS)
    last_decl = max(i for i, ins in enumerate(out) if opcode(ins) in TYPE_OPS | CONST_OPS) + 1
    types = [d for d in new_decls if opcode(d) in TYPE_OPS]
    consts = [d for d in new_decls if opcode(d) not in TYPE_OPS]
    return out[:first_type] + types + out[first_type:last_decl] + consts + out[last_decl:]


_UNORDERED_COMPARES = {181, 183, 185, 187, 189, 191}    # OpFUnord{Equal,NotEqual,LessThan,...}; FOrd = op - 1


def spell_unordered_float_compares(header: list[int], insts: list[list[int]]) -> list[list[int]]:
    """naga turns OpFUnord* compares into WGSL's `<`, `!=`..., which drivers run as ordered compares
    (NaN != 0 comes out false). Spell them `isnan(a) || isnan(b) || FOrd*(a, b)`."""
    def fresh() -> int:
        header[3] += 1
        return header[3] - 1
    out = []
    for ins in insts:
        op = opcode(ins)
        if op not in _UNORDERED_COMPARES:
            out.append(ins)
            continue
        ty, result, a, b = ins[1:5]
        na, nb, ordered, either = fresh(), fresh(), fresh(), fresh()
        out += [[OP_IS_NAN, ty, na, a], [OP_IS_NAN, ty, nb, b], [op - 1, ty, ordered, a, b],
                [OP_LOGICAL_OR, ty, either, na, nb], [OP_LOGICAL_OR, ty, result, either, ordered]]
    return out


OP_I_SUB, OP_I_MUL, OP_S_DIV, OP_S_REM = 130, 132, 135, 138


def spell_signed_remainders(header: list[int], insts: list[list[int]]) -> list[list[int]]:
    """OpSRem comes out as an unsigned remainder on NVIDIA's Vulkan driver, behind naga or not (-5 rem 30
    gave 11, 2**32 - 5 rem 30), where OpSDiv is right; so spell it `a - (a / b) * b` (the lowering has made
    b nonzero and ruled out INT_MIN / -1 already). Runs before sign_integer_operands signs the SDiv."""
    def fresh() -> int:
        header[3] += 1
        return header[3] - 1
    out = []
    for ins in insts:
        if opcode(ins) != OP_S_REM:
            out.append(ins)
            continue
        ty, result, a, b = ins[1:5]
        q, qb = fresh(), fresh()
        out += [[OP_S_DIV, ty, q, a, b], [OP_I_MUL, ty, qb, q, b], [OP_I_SUB, ty, result, a, qb]]
    return out


OP_ACCESS_CHAINS = frozenset({65, 66, 67, 70})  # Op(InBounds)AccessChain, Op(InBounds)PtrAccessChain


def narrow_constant_indices(header: list[int], insts: list[list[int]]) -> list[list[int]]:
    """A constant 64-bit index in an access chain becomes the 32-bit constant of the same value. LLVM
    indexes arrays with i64, and where the index folds to a constant (`s[t]` under `if t == 63`) the
    chain holds an `OpConstant %ulong 63`; naga evaluates constant indices as u32 only and refuses the
    module ("invalid access Constant(..)"). Dynamic 64-bit indices it takes as they are. Index 0 never
    reaches here: LLVM drops a zero index and uses the base pointer."""
    widths = {ins[1]: (ins[2], ins[3]) for ins in insts if opcode(ins) == OP_TYPE_INT}
    wide = {ins[2]: ins[3] | (ins[4] << 32) for ins in insts
            if opcode(ins) == OP_CONSTANT and widths.get(ins[1], (0, 0))[0] == 64 and len(ins) == 5}
    used = {ins[p] for ins in insts if opcode(ins) in OP_ACCESS_CHAINS for p in range(4, len(ins))} & wide.keys()
    wanted = {cid for cid in used if wide[cid] < 1 << 31}
    if not wanted:
        return insts

    def fresh() -> int:
        header[3] += 1
        return header[3] - 1
    new_decls = []
    uint = next((t for t, w in widths.items() if w == (32, 0)), None)
    if uint is None:
        uint = fresh()
        new_decls.append([OP_TYPE_INT, uint, 32, 0])
    narrow = {ins[3]: ins[2] for ins in insts if opcode(ins) == OP_CONSTANT and ins[1] == uint}
    swap = {}
    for cid in sorted(wanted):
        value = wide[cid]
        if value not in narrow:
            narrow[value] = fresh()
            new_decls.append([OP_CONSTANT, uint, narrow[value], value])
        swap[cid] = narrow[value]
    out = []
    for ins in insts:
        if opcode(ins) in OP_ACCESS_CHAINS:
            ins = ins[:4] + [swap.get(w, w) for w in ins[4:]]
        out.append(ins)
    return _declared(out, new_decls)


def fix_for_naga(data: bytes) -> bytes:
    """The whole post-pass: LLVM SPIR-V bytes in, naga-acceptable SPIR-V bytes out."""
    header, insts = parse(bytes(data))
    insts = materialize_nonfinite_floats(header, insts)
    insts = strip_memory_operands(insts)
    insts = merges_before_branches(insts)
    insts = spell_null_integers(insts)
    insts = narrow_constant_indices(header, insts)
    insts = drop_kernel_only_decorations(insts)
    insts = spell_unordered_compares(header, insts)
    insts = spell_unordered_float_compares(header, insts)
    insts = spell_signed_remainders(header, insts)
    insts = sign_integer_operands(header, insts)
    insts = fix_barrier_semantics(header, insts)
    insts = drop_dead_declarations(insts)           # last: the rewrites above leave constants unused
    insts = drop_unused_small_int_capabilities(insts)
    return assemble(header, insts)


__all__ = ["fix_for_naga", "duplicate_ids", "rename_entry", "parse", "assemble", "opcode", "BARRIER_SEMANTICS", "POST_PASS_VERSION"]
