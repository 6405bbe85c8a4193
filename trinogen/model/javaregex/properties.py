"""\\p{...} and \\P{...}: the property names Java 25's Pattern knows.

The names without a prefix, the `Is` binary properties and the general categories are closed
lists (read from Java 25, each checked by the corpus test). Scripts and blocks are long, grow with
each Unicode version and have their own spellings: the common ones are listed, another one is
left to Java (unchecked), never refused.
"""

from __future__ import annotations

from trinogen.model.javaregex.cursor import UNICODE_CHARACTER_CLASS, Cursor, Undecided


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


_CATEGORIES = _names(
    "Cn Lu Ll Lt Lm Lo Mn Me Mc Nd Nl No Zs Zl Zp Cc Cf Co Cs Pd Ps Pe Pc Po Sm Sc Sk So Pi Pf "
    "L M N Z C P S LC LD L1 all")
_POSIX = _names("ALPHA LOWER UPPER SPACE PUNCT XDIGIT ALNUM CNTRL DIGIT BLANK GRAPH PRINT")
# CharPredicates.forProperty: case-sensitive
_PROPERTIES = _CATEGORIES | {
    "ASCII", "Alnum", "Alpha", "Blank", "Cntrl", "Digit", "Graph", "Lower", "Print", "Punct",
    "Space", "Upper", "XDigit", *(f"java{n}" for n in _names(
        "LowerCase UpperCase Alphabetic Ideographic TitleCase Digit Defined Letter LetterOrDigit "
        "JavaIdentifierStart JavaIdentifierPart UnicodeIdentifierStart UnicodeIdentifierPart "
        "IdentifierIgnorable SpaceChar Whitespace ISOControl Mirrored"))}
# CharPredicates.forUnicodeProperty (after "Is"): case-insensitive
_BINARY = _POSIX | _names(
    "ALPHABETIC ASSIGNED CONTROL EMOJI EMOJI_PRESENTATION EMOJI_MODIFIER EMOJI_MODIFIER_BASE "
    "EMOJI_COMPONENT EXTENDED_PICTOGRAPHIC HEXDIGIT HEX_DIGIT IDEOGRAPHIC JOINCONTROL "
    "JOIN_CONTROL LETTER LOWERCASE NONCHARACTERCODEPOINT NONCHARACTER_CODE_POINT TITLECASE "
    "PUNCTUATION UPPERCASE WHITESPACE WHITE_SPACE WORD")
# UnicodeScript.forName (case-insensitive): full names and their four-letter aliases
_SCRIPTS = _names(
    "COMMON ZYYY INHERITED ZINH UNKNOWN ZZZZ LATIN LATN GREEK GREK CYRILLIC CYRL ARMENIAN "
    "ARMN HEBREW HEBR ARABIC ARAB SYRIAC SYRC THAANA THAA DEVANAGARI DEVA BENGALI BENG GURMUKHI "
    "GURU GUJARATI GUJR ORIYA ORYA TAMIL TAML TELUGU TELU KANNADA KNDA MALAYALAM MLYM SINHALA "
    "SINH THAI LAO LAOO TIBETAN TIBT MYANMAR MYMR GEORGIAN GEOR HANGUL HANG ETHIOPIC ETHI "
    "CHEROKEE CHER KHMER KHMR MONGOLIAN MONG HIRAGANA HIRA KATAKANA KANA BOPOMOFO BOPO HAN HANI "
    "YI YIII OLD_ITALIC ITAL GOTHIC GOTH BRAILLE BRAI COPTIC COPT")
# UnicodeBlock.forName (case-insensitive): the canonical name, it without spaces, or the constant
_CANONICAL = (
    "BASIC LATIN", "LATIN-1 SUPPLEMENT", "LATIN EXTENDED-A", "LATIN EXTENDED-B", "IPA EXTENSIONS",
    "GREEK AND COPTIC", "CYRILLIC", "ARMENIAN", "HEBREW", "ARABIC", "DEVANAGARI", "THAI",
    "GEORGIAN", "HANGUL JAMO", "GENERAL PUNCTUATION", "CURRENCY SYMBOLS", "ARROWS",
    "MATHEMATICAL OPERATORS", "BOX DRAWING", "GEOMETRIC SHAPES", "DINGBATS", "HIRAGANA",
    "KATAKANA", "CJK UNIFIED IDEOGRAPHS", "HANGUL SYLLABLES", "PRIVATE USE AREA", "SPECIALS",
    "EMOTICONS", "GREEK EXTENDED")
_CONSTANT = {"GREEK AND COPTIC": "GREEK"}
_BLOCKS = {form for name in _CANONICAL for form in (
    name, name.replace(" ", ""), _CONSTANT.get(name, name.replace(" ", "_").replace("-", "_")))}


def known(name: str, flags: int) -> bool:
    """Whether Java resolves \\p{name}; Undecided for a script or block name not listed."""
    key, eq, value = name.partition("=")
    if eq:
        return _keyed(key.lower(), value)
    if name.startswith("In"):
        return _block(name[2:])
    if name.startswith("Is"):
        rest = name[2:]
        return rest.upper() in _BINARY or rest in _PROPERTIES or _script(rest)
    if flags & UNICODE_CHARACTER_CLASS and name.upper() in _POSIX:
        return True
    return name in _PROPERTIES


def _keyed(key: str, value: str) -> bool:
    if key in ("sc", "script"):
        return _script(value)
    if key in ("blk", "block"):
        return _block(value)
    if key in ("gc", "general_category"):
        return value in _PROPERTIES
    return False


def _script(name: str) -> bool:
    if name.upper() in _SCRIPTS:
        return True
    raise Undecided(f"the script name {name!r}")


def _block(name: str) -> bool:
    if name.upper() in _BLOCKS:
        return True
    raise Undecided(f"the block name {name!r}")


class Properties(Cursor):
    """Pattern.family(): the name after \\p or \\P, one letter or in braces."""

    def property_escape(self) -> None:
        """At the p of \\p (or \\P): the property, one letter or a name in braces."""
        if self.next() != 0x7B:
            self.unread()
            self.family(True)
        else:
            self.family(False)

    def family(self, single_letter: bool) -> None:
        self.next()
        if single_letter:
            name = chr(self.at(self.cursor))
            self.read()
        else:
            start = self.cursor
            saved = self.temp[self.length]
            self.temp[self.length] = 0x7D  # Java's mark('}'): the read stops at the end
            while self.read() != 0x7D:
                pass
            self.temp[self.length] = saved
            end = self.cursor
            if end > self.length:
                raise self.error("Unclosed character family")
            if start + 1 >= end:
                raise self.error("Empty character family")
            name = "".join(map(chr, self.temp[start:end - 1]))
        if not known(name, self.flags):
            key, eq, value = name.partition("=")
            raise self.error(f"Unknown Unicode property {{name=<{key.lower()}>, value=<{value}>}}"
                             if eq else f"Unknown character property name {{{name}}}")


def listed() -> list[str]:
    """Every \\p{...} name the lists above decide, in each spelling: the corpus test has Java
    confirm each one (a name listed wrongly would pass a pattern Java refuses)."""
    names = sorted(_PROPERTIES) + [f"Is{n}" for n in sorted(_BINARY | _PROPERTIES)]
    names += [f"{form}{n.lower()}" for n in sorted(_SCRIPTS) for form in ("Is", "sc=", "script=")]
    names += [f"{form}{n}" for n in sorted(_BLOCKS) for form in ("In", "blk=", "block=")]
    names += [f"gc={n}" for n in sorted(_PROPERTIES)] + sorted(_POSIX)
    return names
