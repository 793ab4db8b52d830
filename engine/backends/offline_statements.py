"""What both offline phase-1 extractors (V1: offline_phase1.py, V2: offline_phase1_v2.py) take
as the user's durable statements, and the project a session ran in."""

from __future__ import annotations

import re
from pathlib import PurePosixPath, PureWindowsPath

# The user's statements, in English and in the languages of issue 9's sessions (Chinese,
# Japanese, Korean, Vietnamese): scripts without spaces have no word boundaries to match.
DURABLE = [
    ("prohibition", re.compile(
        r"\b(never|don't|do not|must not|avoid)\b|不要|不许|不准|禁止|切勿|请勿"
        r"|(?<![区分类级性特告离识辨个差派鉴])别(?![的人处])"
        r"|しないで|ないでください|하지 ?마|말아 ?주|금지|절대"
        r"|\b(đừng|không được|cấm)\b"
        r"|\b(no (toques|uses|cambies|borres|hagas|subas)|nunca|jamás|nicht|nie|niemals|"
        r"kein(e|en)?|ne (pas|jamais)|jamais)\b", re.I)),
    ("convention", re.compile(
        r"\b(always|we use|we're using|we are using|we pin|we run|prefer|instead of|"
        r"goes through|go through|must(?! have)|should(?! have))\b"
        r"|\b(our|we)\b[^.;]{0,40}\b(looks? like|follows?|are named|are written)\b"
        r"|一律|统一|总是|始终|必须|务必|以后|都用|只用|必ず|常に|いつも"
        r"|항상|반드시|로만|\b(luôn|phải|chỉ|giữ nguyên|bắt buộc)\b"
        r"|\b(siempre|debe|tiene que|usa|usamos|immer|muss|müssen|toujours|doit|utilise)\b",
        re.I)),
    ("system", re.compile(r"\b(is called|are called|is named|lives (in|on|at)|runs on|"
                          r"the \w+ (cluster|server|database|environment|bucket|host) is)\b",
                          re.I)),
    ("version", re.compile(r"\b[A-Z][\w.+-]*\s+v?\d+(\.\d+)+\b")),
]
NOT_DURABLE = re.compile(r"\b(don't|do not|never) (remember|store|save|memori[sz]e)\b"
                          r"|不要记|别记|覚えないで|기억하지 ?마|\bđừng (nhớ|lưu)\b", re.I)


def project_name(cwd: str | None) -> str:
    """The folder's name, for a Windows path too (`C:\\Users\\me\\repo` → `repo`)."""
    if not cwd:
        return "unknown"
    windows = "\\" in cwd or re.match(r"^[A-Za-z]:", cwd)
    return (PureWindowsPath(cwd) if windows else PurePosixPath(cwd)).name or cwd
