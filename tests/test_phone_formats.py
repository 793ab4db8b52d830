"""Phone numbers in every common national format, generated (issue 25, item 5): each country's
international form, its national form with the separators people use, and the bare digits
after a label in the languages memdeck's users write (`sdt 0912345678` is how a Vietnamese
user types it). What must stay is the text around them; the shapes code and logs use are left
alone (tests/test_personal_data.py)."""

from __future__ import annotations

import itertools

import pytest

from memdeck.engine.personal_data import scrub_personal

# country: (international, national with separators, national digits only)
NUMBERS = {
    "US": ("+1 415 555 0132", "(415) 555-0132", "4155550132"),
    "UK": ("+44 7700 900461", "07700 900461", "07700900461"),
    "FR": ("+33 6 12 34 56 78", "06 12 34 56 78", "0612345678"),
    "DE": ("+49 151 23456789", "0151 2345 6789", "015123456789"),
    "VN": ("+84 912 345 678", "0912 345 678", "0912345678"),
    "VN-dots": ("+84 91.234.5678", "0912.345.678", "0389123456"),
    "CN": ("+86 138 0013 8000", "138 0013 8000", "13800138000"),
    "JP": ("+81 90-1234-5678", "090-1234-5678", "09012345678"),
    "KR": ("+82 10-1234-5678", "010-1234-5678", "01012345678"),
    "IN": ("+91 98765 43210", "098765 43210", "9876543210"),
    "BR": ("+55 11 91234-5678", "(11) 91234-5678", "11912345678"),
    "AU": ("+61 412 345 678", "0412 345 678", "0412345678"),
}
LABELS = ("phone", "Phone number", "tel", "Tel.", "mobile", "cell", "whatsapp", "sdt", "SĐT",
          "số điện thoại", "đt", "电话", "手机", "手机号", "電話", "携帯", "휴대폰", "전화번호",
          "téléphone", "Telefon", "teléfono", "celular", "telefone", "телефон")
GLUE = (" ", ": ", ":", " - ", "：", " là ", " = ")
CJK = ("电话", "手机", "手机号", "電話", "携帯", "휴대폰", "전화번호")


def _digits(s: str) -> str:
    return "".join(c for c in s if c.isdigit())


def _gone(number: str, text: str) -> bool:
    """No run of 7 of the number's digits is left in `text` (with or without separators)."""
    left = _digits(text)
    d = _digits(number)
    return not any(d[i:i + 7] in left for i in range(len(d) - 6))


@pytest.mark.parametrize("country", list(NUMBERS))
def test_unlabelled_international_and_separated_national_forms(country: str) -> None:
    for number in NUMBERS[country][:2]:
        text = f"Gọi cho anh ấy ở {number} nhé, sau khi deploy xong."
        out = scrub_personal(text)
        assert _gone(number, out), (country, number, out)
        assert out.startswith("Gọi cho anh ấy ở ") and out.endswith(" nhé, sau khi deploy xong.")


@pytest.mark.parametrize(("label", "glue"), list(itertools.product(LABELS, GLUE)))
def test_every_form_after_a_label(label: str, glue: str) -> None:
    for country, forms in NUMBERS.items():
        for number in forms:
            text = f"khách hàng {label}{glue}{number} cần gọi lại"
            out = scrub_personal(text)
            assert _gone(number, out), (country, label, glue, number, out)
            assert out.startswith(f"khách hàng {label}"), out


def test_cjk_labels_need_no_glue() -> None:
    for label, number in itertools.product(CJK, ("13800138000", "09012345678", "01012345678")):
        out = scrub_personal(f"{label}{number}，明天打")
        assert _gone(number, out) and out.startswith(label), out


@pytest.mark.parametrize("text", [
    "dt = 1764201600 # the tick", "a handy script: 20261207 builds", "portable build 20261207",
    "tel.js line 1234567", "mobile-first layout in 2026", "cell A1234567 of the sheet",
    "sdt_version 1.2.3", "build 4155550132 of the series is out",
])
def test_words_near_numbers_that_are_not_phones(text: str) -> None:
    assert scrub_personal(text) == text
