"""Which of the user's durable statements are standing rules (issue 25, item 1).

A preference in memory is a rule the user set for all their work, or for all work in a
project: "we use pnpm, not npm", "always run the tests with `--no-pub`", "以后路由跳转都用
name". Most sentences that sound like one are not:

- a question ("can you always make it faster?", "should we use uv?");
- a complaint about how things are ("this test is always red", "it keeps failing");
- a requirement of the one task ("the export must stream rows", "don't touch the users
  table", "don't change the parser yet"): it belongs to that task's record, not to every
  later session;
- a form field, a checklist line or a template's heading (`- [ ] Tests added`, `Severity:`).

`standing_rule(sentence)` says which: a sentence is a rule when it carries a mark of
permanence (always, never, from now on, by default, in this repo, we use, our … look like, I
prefer, and their equivalents in the languages memdeck's users write in), and is none of the
above. A bare prohibition ("don't touch the parser", "don't add comments") has no such mark:
it is kept as the task's requirement, which loses nothing, rather than guessed into a rule
for every later session. Pasted
text never reaches here: `codex/user_words.py` sets it apart first.
"""

from __future__ import annotations

import re

# marks of permanence, by language; scripts without spaces have no word boundaries to match
_STANDING = re.compile(
    r"\b(always|never|from now on|going forward|in (the )?future|by default|every ?time|"
    r"whenever|each time|at all times|in (this|our|the whole) (repo|repository|project|"
    r"codebase|code base|team|org|monorepo|workspace)|across the (repo|codebase|project)|"
    r"we('re| are)? (use|prefer|pin|keep|write|name|run|deploy|ship|only use|don't use|"
    r"do not use|never|always|on)\b|i (prefer|always|never|only use|don't use)\b|"
    r"our [\w-]+( [\w-]+)? "
    r"(look like|looks like|follow|follows|go in|goes in|go through|goes through|live in|"
    r"lives in|must|should|are named|are written)\b|"
    r"i('d| would) rather|i (like|want) (you )?to always|prefer(s|red)?\b|stable only|"
    r"as a rule|no exceptions|convention)\b"
    r"|以后|今后|一律|统一|总是|始终|每次|永远|一直都|都用|我们(用|的|都|统一)|默认|一定要|务必"
    r"|必ず|常に|いつも|今後|毎回|原則|統一|私たちは"
    r"|항상|앞으로|반드시|매번|언제나|우리는"
    r"|\b(luôn|luôn luôn|lúc nào cũng|từ nay|từ giờ|bao giờ cũng|không bao giờ|mặc định)\b"
    r"|\b(immer|nie|niemals|ab jetzt|künftig|grundsätzlich|wir nutzen|wir verwenden)\b"
    r"|\b(siempre|nunca|a partir de ahora|de ahora en adelante|por defecto|usamos)\b"
    r"|\b(toujours|jamais|désormais|par défaut|on utilise)\b", re.I)

_TASK_TIME = re.compile(
    r"\b(yet|for now|right now|this time|today|for this (pr|task|change|ticket)|"
    r"in this (pr|mr|change|commit|branch|ticket))\b|这次|暂时|先别|今回|이번에|lần này|tạm thời",
    re.I)

_QUESTION = re.compile(
    r"[?？]\s*$|^(can|could|would|should|shall|will|is|are|do|does|did|why|how|what|which|"
    r"when|where|who|have|has|may|sollte[nt]?|soll(en)?|kann|können|könnte|ist|sind|warum|"
    r"wie|was|gibt es|debería(mos)?|puedo|podemos|hay que|es mejor|por qué|cómo|qué|"
    r"est-ce que|pourquoi|comment|faut-il)\b|\b(không|chưa)\s*[?？]?$|(吗|嗎|呢)[?？。]?$|"
    r"(ですか|ますか|でしょうか)[。]?$|(까요|나요|습니까)[?.]?$|^¿", re.I)
_COMPLAINT = re.compile(
    r"\b(is|are|was|were|gets?|keeps?|seems?)\s+(always|constantly|still)\s+(broken|red|"
    r"failing|flaky|slow|wrong|down|crashing|timing out|empty|missing|late)\b|"
    r"\b(always|keeps?|constantly)\s+(fails?|failing|breaks?|breaking|crash(es|ing)?|"
    r"times? out|timing out|hangs?|flakes?|red)\b|\bnever (works?|worked|passes|passed|"
    r"finishes|loads?|returns?)\b"
    r"|(总是|一直|每次|老是)[^，。,.]{0,12}(失败|报错|挂|崩|超时|出错)"
    r"|(いつも|毎回|常に)[^。、]{0,15}(失敗|落ち|エラー|遅い|壊れ)"
    r"|(매번|항상|늘|자꾸)[^.,]{0,20}(실패|안 ?돼|깨져|에러|오류|느려)"
    r"|\b(luôn|lúc nào cũng)\b[^.,]{0,20}\b(lỗi|hỏng|chậm|thất bại)\b", re.I)
_FORM = re.compile(
    r"^\s*([-*]\s*)?\[[ xX]\]|^\s*#{1,6}\s|<!--|\{\{|\$ARGUMENTS|^\s*[-*]?\s*\*\*[^*]+\*\*\s*:|"
    r"\((required|optional)\)|^\s*[-*]?\s*[A-Z][\w /]{0,30}:\s*(yes|no|n/a|none|tbd|_+)?\s*$",
    re.I)


def is_question(sentence: str) -> bool:
    """A question, in the languages memdeck reads: never a rule nor a requirement."""
    return bool(_QUESTION.search(sentence.strip()))


def standing_rule(sentence: str) -> bool:
    """True for a rule the user set beyond this task (module docstring)."""
    s = sentence.strip()
    if not s or _QUESTION.search(s) or _COMPLAINT.search(s) or _FORM.search(s):
        return False
    if _TASK_TIME.search(s):
        return False
    return bool(_STANDING.search(s))
