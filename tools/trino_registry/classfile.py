"""A minimal reader of JVM class files: just what the registry needs, nothing more.

It reads the constant pool, the class header, the runtime-visible annotations of the class and
of its methods, and walks each method's bytecode for a few call patterns (string constants
passed to a binder method, the constant a ``getName()`` returns). Written from the JVM
specification (chapter 4, "The class File Format"); no JVM is needed.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

# Annotation element values: a str, an int/float, a class descriptor, an enum (type, name),
# a nested annotation, or a list of those.
Element = object


@dataclass(frozen=True)
class Annotation:
    type: str  # internal form, e.g. "io/airlift/configuration/Config"
    values: dict[str, Element]


@dataclass(frozen=True)
class Call:
    """One invoke instruction with the constants loaded (by ldc) since the previous invoke."""

    owner: str
    name: str
    descriptor: str
    strings: tuple[str, ...]
    classes: tuple[str, ...]
    method_strings: tuple[str, ...]  # every string constant loaded before it in the method


@dataclass
class Method:
    name: str
    descriptor: str
    annotations: list[Annotation] = field(default_factory=list)
    code: bytes = b""
    calls: list[Call] | None = None  # filled on first use by calls()


@dataclass
class ClassFile:
    name: str
    super_name: str | None
    interfaces: list[str]
    annotations: list[Annotation]
    methods: list[Method]
    fields: list[tuple[str, str]]  # (name, descriptor), in declaration order
    class_refs: set[str]  # every CONSTANT_Class this class names
    pool: list[object]

    def string_at(self, index: int) -> str | None:
        entry = self.pool[index]
        return entry[1] if isinstance(entry, tuple) and entry[0] == "string" else None

    def class_at(self, index: int) -> str | None:
        entry = self.pool[index]
        return entry[1] if isinstance(entry, tuple) and entry[0] == "class" else None


class ClassFormatError(ValueError):
    pass


def _utf8(raw: bytes) -> str:
    # Modified UTF-8: NUL as C0 80 and supplementary characters as surrogate pairs.
    return raw.replace(b"\xc0\x80", b"\x00").decode("utf-8", "surrogatepass").encode(
        "utf-16", "surrogatepass").decode("utf-16")


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def u1(self) -> int:
        value = self.data[self.pos]
        self.pos += 1
        return value

    def u2(self) -> int:
        (value,) = struct.unpack_from(">H", self.data, self.pos)
        self.pos += 2
        return int(value)

    def u4(self) -> int:
        (value,) = struct.unpack_from(">I", self.data, self.pos)
        self.pos += 4
        return int(value)

    def take(self, n: int) -> bytes:
        chunk = self.data[self.pos:self.pos + n]
        if len(chunk) != n:
            raise ClassFormatError("truncated class file")
        self.pos += n
        return chunk


def _read_pool(r: _Reader) -> list[object]:
    count = r.u2()
    pool: list[object] = [None] * count
    i = 1
    while i < count:
        tag = r.u1()
        if tag == 1:
            pool[i] = _utf8(r.take(r.u2()))
        elif tag in (3, 4):
            pool[i] = ("num", r.take(4))
        elif tag in (5, 6):
            pool[i] = ("num", r.take(8))
            i += 1  # longs and doubles take two slots
        elif tag == 7:
            pool[i] = ("class_idx", r.u2())
        elif tag == 8:
            pool[i] = ("string_idx", r.u2())
        elif tag in (9, 10, 11):
            pool[i] = ("ref", r.u2(), r.u2())
        elif tag == 12:
            pool[i] = ("nat", r.u2(), r.u2())
        elif tag == 15:
            pool[i] = ("handle", r.u1(), r.u2())
        elif tag in (16, 19, 20):
            pool[i] = ("other", r.u2())
        elif tag in (17, 18):
            pool[i] = ("other", r.u2(), r.u2())
        else:
            raise ClassFormatError(f"unknown constant pool tag {tag}")
        i += 1
    # Resolve the indirections once, so lookups are direct.
    for j, entry in enumerate(pool):
        if isinstance(entry, tuple) and entry[0] == "class_idx":
            pool[j] = ("class", pool[entry[1]])
        elif isinstance(entry, tuple) and entry[0] == "string_idx":
            pool[j] = ("string", pool[entry[1]])
    return pool


def _element(r: _Reader, pool: list[object]) -> Element:
    tag = chr(r.u1())
    if tag == "s":
        return pool[r.u2()]
    if tag in "BCDFIJSZ":
        r.u2()
        return None
    if tag == "e":
        return (pool[r.u2()], pool[r.u2()])
    if tag == "c":
        return ("class", pool[r.u2()])
    if tag == "@":
        return _annotation(r, pool)
    if tag == "[":
        return [_element(r, pool) for _ in range(r.u2())]
    raise ClassFormatError(f"unknown element tag {tag!r}")


def _annotation(r: _Reader, pool: list[object]) -> Annotation:
    descriptor = str(pool[r.u2()])
    values = {}
    for _ in range(r.u2()):
        name = str(pool[r.u2()])
        values[name] = _element(r, pool)
    # Descriptor "Lio/airlift/configuration/Config;" -> "io/airlift/configuration/Config".
    return Annotation(descriptor[1:-1], values)


def _attributes(r: _Reader, pool: list[object]) -> tuple[list[Annotation], bytes]:
    annotations: list[Annotation] = []
    code = b""
    for _ in range(r.u2()):
        name = pool[r.u2()]
        length = r.u4()
        body = r.take(length)
        if name == "RuntimeVisibleAnnotations":
            sub = _Reader(body)
            annotations.extend(_annotation(sub, pool) for _ in range(sub.u2()))
        elif name == "Code":
            # max_stack u2, max_locals u2, code_length u4, code[...]
            (code_length,) = struct.unpack_from(">I", body, 4)
            code = body[8:8 + code_length]
    return annotations, code


def parse(data: bytes) -> ClassFile:
    """Parse one class file; raises ClassFormatError on anything that is not one."""
    r = _Reader(data)
    try:
        if r.u4() != 0xCAFEBABE:
            raise ClassFormatError("not a class file")
        r.take(4)  # minor, major
        pool = _read_pool(r)
        r.u2()  # access flags
        this = pool[r.u2()]
        super_index = r.u2()
        interfaces = [pool[r.u2()] for _ in range(r.u2())]
        fields = []
        for _ in range(r.u2()):
            r.u2()
            fields.append((str(pool[r.u2()]), str(pool[r.u2()])))
            _attributes(r, pool)
        methods = []
        for _ in range(r.u2()):
            r.u2()
            name, descriptor = pool[r.u2()], pool[r.u2()]
            annotations, code = _attributes(r, pool)
            methods.append(Method(str(name), str(descriptor), annotations, code))
        annotations, _ = _attributes(r, pool)
    except (IndexError, struct.error) as e:
        raise ClassFormatError(f"malformed class file: {e}") from e
    class_refs = {str(e[1]) for e in pool if isinstance(e, tuple) and e[0] == "class"}
    return ClassFile(
        name=str(this[1]) if isinstance(this, tuple) else "",
        super_name=str(pool[super_index][1]) if super_index else None,  # type: ignore[index]
        interfaces=[str(i[1]) for i in interfaces if isinstance(i, tuple)],
        annotations=annotations,
        methods=methods,
        fields=fields,
        class_refs=class_refs,
        pool=pool,
    )


# Operand lengths of the fixed-size opcodes (JVM spec 6.5); tableswitch, lookupswitch and wide
# are handled in the walker.
_LENGTHS = bytearray([1] * 256)
for _op in (0x10, 0x12, 0x15, 0x16, 0x17, 0x18, 0x19, 0x36, 0x37, 0x38, 0x39, 0x3A, 0xA9, 0xBC):
    _LENGTHS[_op] = 2
for _op in (0x11, 0x13, 0x14, 0x84, *range(0x99, 0xA9), 0xB2, 0xB3, 0xB4, 0xB5, 0xB6, 0xB7,
            0xB8, 0xBB, 0xBD, 0xC0, 0xC1, 0xC6, 0xC7):
    _LENGTHS[_op] = 3
for _op in (0xC5,):
    _LENGTHS[_op] = 4
for _op in (0xB9, 0xBA, 0xC8, 0xC9):
    _LENGTHS[_op] = 5


def calls(cls: ClassFile, method: Method) -> list[Call]:
    """Each invoke in a method, with the string and class constants loaded since the last one."""
    if method.calls is None:
        method.calls = _walk(cls, method.code)
    return method.calls


def _walk(cls: ClassFile, code: bytes) -> list[Call]:
    out: list[Call] = []
    strings: list[str] = []
    classes: list[str] = []
    seen: list[str] = []
    pc = 0
    n = len(code)
    while pc < n:
        op = code[pc]
        if op in (0x12, 0x13):  # ldc, ldc_w
            index = code[pc + 1] if op == 0x12 else (code[pc + 1] << 8) | code[pc + 2]
            entry = cls.pool[index]
            if isinstance(entry, tuple) and entry[0] == "string":
                strings.append(str(entry[1]))
                seen.append(str(entry[1]))
            elif isinstance(entry, tuple) and entry[0] == "class":
                classes.append(str(entry[1]))
        elif 0xB6 <= op <= 0xB9:  # invokevirtual, invokespecial, invokestatic, invokeinterface
            ref = cls.pool[(code[pc + 1] << 8) | code[pc + 2]]
            if isinstance(ref, tuple) and ref[0] == "ref":
                owner = cls.pool[ref[1]]
                nat = cls.pool[ref[2]]
                if isinstance(owner, tuple) and isinstance(nat, tuple):
                    out.append(Call(str(owner[1]), str(cls.pool[nat[1]]), str(cls.pool[nat[2]]),
                                    tuple(strings), tuple(classes), tuple(seen)))
            strings, classes = [], []
        if op == 0xAA:  # tableswitch: pad to 4, default, low, high, offsets
            base = pc + 4 - (pc % 4)
            low, high = struct.unpack_from(">ii", code, base + 4)
            pc = base + 12 + 4 * (high - low + 1)
        elif op == 0xAB:  # lookupswitch: pad, default, npairs, pairs
            base = pc + 4 - (pc % 4)
            (npairs,) = struct.unpack_from(">i", code, base + 4)
            pc = base + 8 + 8 * npairs
        elif op == 0xC4:  # wide
            pc += 6 if code[pc + 1] == 0x84 else 4
        else:
            pc += _LENGTHS[op]
    return out


def returned_constant(cls: ClassFile, method: Method) -> str | None:
    """The string constant a method returns when its whole body is `return "..."`."""
    code = method.code
    if len(code) == 3 and code[0] == 0x12 and code[2] == 0xB0:
        return cls.string_at(code[1])
    if len(code) == 4 and code[0] == 0x13 and code[3] == 0xB0:
        return cls.string_at((code[1] << 8) | code[2])
    return None


def _next_pc(code: bytes, pc: int) -> int:
    op = code[pc]
    if op == 0xAA:  # tableswitch: pad to 4, default, low, high, offsets
        base = pc + 4 - (pc % 4)
        low, high = struct.unpack_from(">ii", code, base + 4)
        return int(base + 12 + 4 * (high - low + 1))
    if op == 0xAB:  # lookupswitch: pad, default, npairs, pairs
        base = pc + 4 - (pc % 4)
        (npairs,) = struct.unpack_from(">i", code, base + 4)
        return int(base + 8 + 8 * npairs)
    if op == 0xC4:  # wide
        return pc + (6 if code[pc + 1] == 0x84 else 4)
    return pc + _LENGTHS[op]


def _member(cls: ClassFile, index: int) -> str:
    """A field or method reference as "owner.name"."""
    ref = cls.pool[index]
    if not (isinstance(ref, tuple) and ref[0] == "ref"):
        return ""
    owner, nat = cls.pool[ref[1]], cls.pool[ref[2]]
    if not (isinstance(owner, tuple) and isinstance(nat, tuple)):
        return ""
    return f"{owner[1]}.{cls.pool[nat[1]]}"


def events(cls: ClassFile, method: Method) -> list[tuple[str, str]]:
    """The instructions of a method that name something, in order: ("new", class),
    ("static", "Owner.FIELD") for getstatic, ("string", constant) for ldc, ("call",
    "Owner.method") for the four invokes, ("switch", "") for table and lookup switches. Enough to
    see which constant a module is chosen by (conditional.py's rows are checked with it)."""
    out: list[tuple[str, str]] = []
    code = method.code
    pc = 0
    while pc < len(code):
        op = code[pc]
        wide = (code[pc + 1] << 8) | code[pc + 2] if pc + 2 < len(code) else 0
        if op == 0xBB:
            out.append(("new", cls.class_at(wide) or ""))
        elif op == 0xB2:
            out.append(("static", _member(cls, wide)))
        elif op in (0x12, 0x13):
            text = cls.string_at(code[pc + 1] if op == 0x12 else wide)
            if text is not None:
                out.append(("string", text))
        elif 0xB6 <= op <= 0xB9:
            out.append(("call", _member(cls, wide)))
        elif op in (0xAA, 0xAB):
            out.append(("switch", ""))
        pc = _next_pc(code, pc)
    return out


def constants_and_invokes(cls: ClassFile, method: Method) -> list[tuple[str, str, str, str]]:
    """The string and class constants a method loads (ldc) and the methods it invokes, in
    order: ("string", text, "", ""), ("class", name, "", ""), ("invoke", owner, name,
    descriptor). Session properties (session.py) read a factory call's arguments from it."""
    out: list[tuple[str, str, str, str]] = []
    code = method.code
    pc = 0
    while pc < len(code):
        op = code[pc]
        wide = (code[pc + 1] << 8) | code[pc + 2] if pc + 2 < len(code) else 0
        if op in (0x12, 0x13):
            index = code[pc + 1] if op == 0x12 else wide
            entry = cls.pool[index]
            if isinstance(entry, tuple) and entry[0] in ("string", "class"):
                out.append((str(entry[0]), str(entry[1]), "", ""))
        elif 0xB6 <= op <= 0xB9:
            ref = cls.pool[wide]
            if isinstance(ref, tuple) and ref[0] == "ref":
                owner, nat = cls.pool[ref[1]], cls.pool[ref[2]]
                if isinstance(owner, tuple) and isinstance(nat, tuple):
                    out.append(("invoke", str(owner[1]), str(cls.pool[nat[1]]),
                                str(cls.pool[nat[2]])))
        pc = _next_pc(code, pc)
    return out
