"""Writes secrets.txt: FAKE secrets with the right shapes and random content (fixed seed).

Run `python tests/data/redaction/make_corpus.py` to regenerate. No value here is a real
credential: every random part comes from `random.Random(SEED)`. Each case is one line
`[label] text`, or a block `[label] <<<` … `>>>`; the secret values are marked ⟦…⟧ and the
markers are removed before the text is redacted. benign.txt and codex_inherited.txt are
written by hand.
"""

from __future__ import annotations

import base64
import json
import random
import string
from pathlib import Path

SEED = 20261201
R = random.Random(SEED)
ALNUM = string.ascii_letters + string.digits
URLSAFE = ALNUM + "-_"
B64 = ALNUM + "+/"
UPPER_NUM = string.ascii_uppercase + string.digits
BASE32 = string.ascii_uppercase + "234567"


def rnd(alphabet: str, n: int) -> str:
    while True:
        s = "".join(R.choice(alphabet) for _ in range(n))
        # shapes of real keys: mixed classes (a draw without a digit or a case is re-drawn)
        if n < 12 or not set(alphabet) & set(string.digits) or any(c.isdigit() for c in s):
            return s


def b64url(obj: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj, separators=(",", ":")).encode()) \
        .decode().rstrip("=")


# -- secret shapes ---------------------------------------------------------------------------
def openai_legacy() -> str:
    return "sk-" + rnd(ALNUM, 20) + "T3BlbkFJ" + rnd(ALNUM, 20)


def openai_project(kind: str = "proj") -> str:
    return f"sk-{kind}-" + rnd(URLSAFE, 74) + "T3BlbkFJ" + rnd(URLSAFE, 74)


def anthropic(kind: str = "api03") -> str:
    return f"sk-ant-{kind}-" + rnd(URLSAFE, 93) + "AA"


def aws_id(prefix: str = "AKIA") -> str:
    return prefix + rnd(BASE32, 16)


def aws_secret() -> str:
    return rnd(B64, 40)


def google() -> str:
    return "AIza" + rnd(URLSAFE, 35)


def azure_key() -> str:
    return rnd(B64, 86) + "=="


def github(prefix: str = "ghp") -> str:
    return f"{prefix}_" + rnd(ALNUM, 36)


def github_pat() -> str:
    return "github_pat_11" + rnd(UPPER_NUM, 20) + "_" + rnd(ALNUM, 59)


def gitlab() -> str:
    return "glpat-" + rnd(URLSAFE, 20)


def slack(prefix: str = "xoxb") -> str:
    digits = string.digits
    if prefix == "xoxp":
        return (f"xoxp-{rnd(digits, 12)}-{rnd(digits, 12)}-{rnd(digits, 13)}-"
                + rnd("0123456789abcdef", 32))
    return f"{prefix}-{rnd(digits, 12)}-{rnd(digits, 13)}-{rnd(ALNUM, 24)}"


def slack_hook_path() -> str:
    return f"T{rnd(UPPER_NUM, 10)}/B{rnd(UPPER_NUM, 10)}/{rnd(ALNUM, 24)}"


def stripe(prefix: str = "sk_live") -> str:
    return f"{prefix}_" + rnd(ALNUM, 24 if prefix.endswith("test") else 99)


def stripe_whsec() -> str:
    return "whsec_" + rnd(ALNUM, 32)


def npm() -> str:
    return "npm_" + rnd(ALNUM, 36)


def pypi() -> str:
    return "pypi-AgEIcHlwaS5vcmc" + rnd(URLSAFE, 140)


def hf() -> str:
    return "hf_" + rnd(string.ascii_letters, 34)


def jwt() -> str:
    header = b64url({"alg": R.choice(["HS256", "RS256", "ES256"]), "typ": "JWT"})
    payload = b64url({"sub": rnd(string.digits, 10), "name": R.choice(["ada", "bob", "eve"]),
                      "iat": R.randint(1_700_000_000, 1_800_000_000),
                      "scope": R.choice(["read", "write admin", "repo"])})
    return f"{header}.{payload}.{rnd(URLSAFE, 43)}"


def pem(kind: str = "RSA ", lines: int = 12, headers: str = "") -> str:
    body = "\n".join(rnd(B64, 64) for _ in range(lines)) + "\n" + rnd(B64, 28) + "=="
    begin = f"-----BEGIN {kind}PRIVATE KEY{' BLOCK' if kind == 'PGP ' else ''}-----"
    end = begin.replace("BEGIN", "END")
    return f"{begin}\n{headers}{body}\n{end}"


def password() -> str:  # a generated password: letters, a digit and a symbol
    return rnd(ALNUM, R.randint(9, 17)) + R.choice(string.digits) + R.choice("!#%^*-_.~")


def hexsecret(n: int = 64) -> str:
    return rnd("0123456789abcdef", n)


def basic(user: str, pw: str) -> str:
    return base64.b64encode(f"{user}:{pw}".encode()).decode()


# -- contexts --------------------------------------------------------------------------------
def m(s: str) -> str:
    return f"⟦{s}⟧"


def rollout_output(text: str) -> str:
    line = {"timestamp": "2026-12-01T06:40:19.088Z", "type": "response_item",
            "payload": {"type": "function_call_output", "call_id": "call_" + rnd(ALNUM, 6),
                        "output": text}}
    return json.dumps(line, ensure_ascii=False, separators=(",", ":"))


def rollout_call(cmd: str) -> str:
    args = json.dumps({"cmd": cmd, "workdir": "/home/dev/src/widget"}, ensure_ascii=False)
    line = {"timestamp": "2026-12-01T06:40:11.788Z", "type": "response_item",
            "payload": {"type": "function_call", "name": "exec_command", "arguments": args,
                        "call_id": "call_" + rnd(ALNUM, 6)}}
    return json.dumps(line, ensure_ascii=False, separators=(",", ":"))


def rollout_user(text: str) -> str:
    line = {"timestamp": "2026-12-01T06:40:48.288Z", "type": "response_item",
            "payload": {"type": "message", "role": "user",
                        "content": [{"type": "input_text", "text": text}]}}
    return json.dumps(line, ensure_ascii=False, separators=(",", ":"))


def cases() -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []

    def add(label: str, text: str) -> None:
        out.append((label, text))

    # OpenAI
    add("openai/bare-legacy", m(openai_legacy()))
    add("openai/env-proj", f"OPENAI_API_KEY={m(openai_project())}")
    add("openai/export-svcacct", f"export OPENAI_API_KEY={m(openai_project('svcacct'))}")
    add("openai/json-admin", f'{{"openai": {{"admin_key": "{m(openai_project("admin"))}"}}}}')
    add("openai/rollout-env", rollout_output(
        f"Process exited with code 1\nOPENAI_API_KEY={m(openai_project())}\nFAILED"))
    add("openai/rollout-escaped-quotes", rollout_call(
        f'docker run -e "OPENAI_API_KEY={m(openai_project())}" app:latest'))
    add("openai/bearer-header", f"curl -H 'Authorization: Bearer {m(openai_project())}' "
        "https://api.openai.com/v1/models")
    add("openai/python-code", f'client = OpenAI(api_key="{m(openai_project())}")')
    add("openai/prose", f"my key is {m(openai_legacy())}, please use it for the test")
    add("openai/toml", f'api_key = "{m(openai_project("svcacct"))}"')
    # Anthropic
    add("anthropic/bare", m(anthropic()))
    add("anthropic/env", f"ANTHROPIC_API_KEY={m(anthropic())}")
    add("anthropic/admin-yaml", f"  admin_key: {m(anthropic('admin01'))}")
    add("anthropic/header", f"curl https://api.anthropic.com/v1/messages -H "
        f"\"x-api-key: {m(anthropic())}\"")
    add("anthropic/rollout", rollout_user(f"use this key: {m(anthropic())} for the eval"))
    # AWS
    add("aws/id-bare", m(aws_id()))
    add("aws/id-asia", f"AWS_ACCESS_KEY_ID={m(aws_id('ASIA'))}")
    add("aws/credentials-file", "\n".join(["<<<", "[default]",
        f"aws_access_key_id = {m(aws_id())}",
        f"aws_secret_access_key = {m(aws_secret())}", "region = eu-west-1", ">>>"]))
    add("aws/env-secret", f"AWS_SECRET_ACCESS_KEY={m(aws_secret())}")
    add("aws/export-secret", f"export AWS_SECRET_ACCESS_KEY=\"{m(aws_secret())}\"")
    add("aws/configure-set", f"aws configure set aws_secret_access_key {m(aws_secret())}")
    add("aws/sts-json", f'{{"Credentials": {{"AccessKeyId": "{m(aws_id("ASIA"))}", '
        f'"SecretAccessKey": "{m(aws_secret())}", "SessionToken": "{m(rnd(B64, 120))}"}}}}')
    add("aws/rollout-newline", rollout_output(
        f"aws sts get-caller-identity\n{m(aws_id())}\n{{\"Account\": \"123456789012\"}}"))
    add("aws/rollout-cli", rollout_call(
        f"AWS_ACCESS_KEY_ID={m(aws_id())} AWS_SECRET_ACCESS_KEY={m(aws_secret())} "
        "aws s3 ls"))
    add("aws/presigned-url", f"https://bucket.s3.amazonaws.com/report.pdf?X-Amz-Algorithm="
        f"AWS4-HMAC-SHA256&X-Amz-Credential={m(aws_id())}%2F20261201%2Fus-east-1%2Fs3%2F"
        f"aws4_request&X-Amz-Signature={m(hexsecret())}")
    # Google / GCP
    add("google/bare", m(google()))
    add("google/url-param", f"https://maps.googleapis.com/maps/api/geocode/json?address=x&key="
        f"{m(google())}")
    add("google/env", f"GOOGLE_API_KEY={m(google())}")
    add("google/rollout", rollout_output(f"gcloud services api-keys get-key-string k1\n"
                                          f"keyString: {m(google())}"))
    sa_key = pem("", 16)
    sa = {"type": "service_account", "project_id": "demo-project-41733",
          "private_key_id": hexsecret(40), "private_key": sa_key + "\n",
          "client_email": "ci-bot@demo-project-41733.iam.gserviceaccount.com",
          "client_id": rnd(string.digits, 21)}
    sa_line = json.dumps(sa).replace(json.dumps(sa_key + "\n")[1:-3],
                                     m(json.dumps(sa_key + "\n")[1:-3]))
    add("gcp/service-account-json-line", sa_line)
    sa_pretty = json.dumps(sa, indent=2)
    sa_pretty = sa_pretty.replace(json.dumps(sa_key + "\n")[1:-3],
                                  m(json.dumps(sa_key + "\n")[1:-3]))
    add("gcp/service-account-json-block", "<<<\n" + sa_pretty + "\n>>>")
    add("gcp/rollout-cat", rollout_output("$ cat sa.json\n" + sa_line))
    # Azure
    conn = (f"DefaultEndpointsProtocol=https;AccountName=demostore{rnd(string.digits, 3)};"
            f"AccountKey={m(azure_key())};EndpointSuffix=core.windows.net")
    add("azure/connection-string", conn)
    add("azure/env", f'AZURE_STORAGE_CONNECTION_STRING="{conn}"')
    add("azure/rollout", rollout_output(f"az storage account show-connection-string\n{conn}"))
    add("azure/servicebus", "Endpoint=sb://demo-bus.servicebus.windows.net/;"
        f"SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={m(rnd(B64, 43) + '=')}")
    add("azure/sas-url", "https://demostore.blob.core.windows.net/c/f.txt?sv=2022-11-02&ss=b"
        f"&srt=o&sp=r&se=2026-12-31T00:00:00Z&sig={m(rnd(ALNUM, 43) + '%3D')}")
    # GitHub
    for p in ("ghp", "gho", "ghu", "ghs", "ghr"):
        add(f"github/{p}-bare", m(github(p)))
    add("github/env", f"GITHUB_TOKEN={m(github())}")
    add("github/pat-export", f"export GH_TOKEN={m(github_pat())}")
    add("github/pat-bare", m(github_pat()))
    add("github/url", f"git clone https://x-access-token:{m(github('ghs'))}@github.com/org/repo.git")
    add("github/url-token-only", f"https://{m(github())}@github.com/acme/private.git")
    add("github/header", f"curl -H \"Authorization: token {m(github())}\" "
        "https://api.github.com/user")
    add("github/rollout", rollout_call(f"gh auth login --with-token <<< {m(github())}"))
    add("github/yaml", f"    token: {m(github_pat())}")
    add("github/gh-hosts", "<<<\ngithub.com:\n    user: dev\n"
        f"    oauth_token: {m(github('gho'))}\n    git_protocol: https\n>>>")
    # GitLab
    add("gitlab/bare", m(gitlab()))
    add("gitlab/env", f"GITLAB_TOKEN={m(gitlab())}")
    add("gitlab/header", f"curl --header \"PRIVATE-TOKEN: {m(gitlab())}\" "
        "https://gitlab.example.com/api/v4/projects")
    add("gitlab/rollout", rollout_output(f"remote: token {m(gitlab())} expires 2027-01-01"))
    # Slack
    for p in ("xoxb", "xoxp", "xoxa", "xoxr", "xoxs"):
        add(f"slack/{p}", f"SLACK_TOKEN={m(slack(p))}" if p == "xoxp" else m(slack(p)))
    add("slack/bot-json", f'{{"ok": true, "access_token": "{m(slack())}", "token_type": "bot"}}')
    add("slack/webhook", f"https://hooks.slack.com/services/{m(slack_hook_path())}")
    add("slack/webhook-curl", "curl -X POST -H 'Content-type: application/json' --data "
        f"'{{\"text\":\"deploy done\"}}' https://hooks.slack.com/services/{m(slack_hook_path())}")
    add("slack/webhook-rollout", rollout_output(
        f"SLACK_WEBHOOK_URL=https://hooks.slack.com/services/{m(slack_hook_path())}\nok"))
    # Stripe
    add("stripe/live-bare", m(stripe()))
    add("stripe/rk-env", f"STRIPE_RESTRICTED_KEY={m(stripe('rk_live'))}")
    add("stripe/test-python", f'stripe.api_key = "{m(stripe("sk_test"))}"')
    add("stripe/whsec-env", f"STRIPE_WEBHOOK_SECRET={m(stripe_whsec())}")
    add("stripe/whsec-bare", f"Ready! Your webhook signing secret is {m(stripe_whsec())}")
    add("stripe/curl", f"curl https://api.stripe.com/v1/charges -u {m(stripe())}:")
    # npm / PyPI / Hugging Face
    add("npm/bare", m(npm()))
    add("npm/npmrc", f"//registry.npmjs.org/:_authToken={m(npm())}")
    add("npm/rollout", rollout_output(
        f"$ cat ~/.npmrc\n//registry.npmjs.org/:_authToken={m(npm())}"))
    add("pypi/bare", m(pypi()))
    add("pypi/pypirc", f"<<<\n[pypi]\n  username = __token__\n  password = {m(pypi())}\n>>>")
    add("pypi/twine", f"twine upload -u __token__ -p {m(pypi())} dist/*")
    add("pypi/env", f"TWINE_PASSWORD={m(pypi())}")
    add("hf/bare", m(hf()))
    add("hf/env", f"HF_TOKEN={m(hf())}")
    add("hf/cli", f"huggingface-cli login --token {m(hf())}")
    add("hf/rollout", rollout_user(f"my HF token is {m(hf())}"))
    # JWTs
    add("jwt/bare", m(jwt()))
    add("jwt/bearer", f"Authorization: Bearer {m(jwt())}")
    add("jwt/cookie", f"Set-Cookie: session={m(jwt())}; Path=/; HttpOnly")
    add("jwt/json", f'{{"id_token": "{m(jwt())}", "expires_in": 3600}}')
    add("jwt/rollout", rollout_output(f"HTTP/1.1 200 OK\n\n{{\"access_token\":\"{m(jwt())}\"}}"))
    add("jwt/bearer-rollout", rollout_call(
        f"curl -s -H 'Authorization: Bearer {m(jwt())}' http://localhost:8000/api/me"))
    # PEM private keys
    add("pem/rsa", "<<<\n" + m(pem("RSA ")) + "\n>>>")
    add("pem/plain", "<<<\n" + m(pem("")) + "\n>>>")
    add("pem/ec", "<<<\n" + m(pem("EC ", 3)) + "\n>>>")
    add("pem/dsa", "<<<\n" + m(pem("DSA ", 8)) + "\n>>>")
    add("pem/openssh", "<<<\n" + m(pem("OPENSSH ", 6)) + "\n>>>")
    add("pem/encrypted", "<<<\n" + m(pem("ENCRYPTED ", 14)) + "\n>>>")
    add("pem/rsa-legacy-encrypted", "<<<\n" + m(pem(
        "RSA ", 10, "Proc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,"
        + rnd("0123456789ABCDEF", 32) + "\n\n")) + "\n>>>")
    add("pem/pgp", "<<<\n" + m(pem("PGP ", 10, "Version: GnuPG v2\n\n")) + "\n>>>")
    add("pem/in-tool-output", "<<<\n$ cat ~/.ssh/id_ed25519\n" + m(pem("OPENSSH ", 5))
        + "\n$ ls ~/.ssh\n>>>")
    key = pem("RSA ", 6)
    add("pem/rollout-escaped", rollout_output("$ cat deploy.pem\n" + key).replace(
        json.dumps(key)[1:-1], m(json.dumps(key)[1:-1])))
    add("pem/env-escaped", "JWT_PRIVATE_KEY=\"" + m(pem("", 5).replace("\n", "\\n")) + "\"")
    # Passwords in URLs
    for scheme, host in (("postgres", "db.internal:5432/app"),
                         ("postgresql", "localhost/shop"), ("mysql", "127.0.0.1:3306/wp"),
                         ("mongodb+srv", "cluster0.ab1cd.mongodb.net/x"),
                         ("redis", "cache:6379/0"), ("amqp", "rabbit:5672/%2F"),
                         ("https", "git.example.com/team/repo.git"),
                         ("ftp", "files.example.com/pub")):
        add(f"url/{scheme}", f"{scheme}://{R.choice(['app', 'admin', 'deploy', 'svc_ro'])}:"
            f"{m(password())}@{host}")
    add("url/redis-no-user", f"REDIS_URL=redis://:{m(password())}@redis.internal:6379")
    add("url/env", f"DATABASE_URL=postgres://app:{m(password())}@db/app")
    add("url/rollout", rollout_output(
        f"Process exited with code 2\nDATABASE_URL=postgres://app:{m(password())}@db/app\nFAILED"))
    add("url/log", f"2026-12-01 06:40:19 ERROR connect failed: mysql://root:{m(password())}"
        "@10.0.0.12:3306/orders (timeout)")
    # *_PASSWORD / *_TOKEN / *_SECRET / *_API_KEY assignments
    add("assign/env-password", f"DB_PASSWORD={m(password())}")
    add("assign/env-short-password", f"POSTGRES_PASSWORD={m('hunter2')}")
    add("assign/export-token", f"export CI_JOB_TOKEN={m(rnd(ALNUM, 32))}")
    add("assign/env-secret", f"JWT_SECRET={m(hexsecret())}")
    add("assign/env-api-key",
        f"SENDGRID_API_KEY={m('SG.' + rnd(URLSAFE, 22) + '.' + rnd(URLSAFE, 43))}")
    add("assign/env-client-secret", f"OAUTH_CLIENT_SECRET={m(rnd(URLSAFE, 40))}")
    add("assign/dotenv-quoted", f'MAILGUN_API_KEY="{m("key-" + hexsecret(32))}"')
    add("assign/dotenv-single", f"SMTP_PASSWORD='{m(password())}'")
    add("assign/yaml-password", f"  password: {m(password())}")
    add("assign/yaml-quoted", f'    db_password: "{m(password())}"')
    add("assign/yaml-spaces", f'  admin_password: "{m("correct horse battery staple")}"')
    add("assign/json-password", f'{{"username": "admin", "password": "{m(password())}"}}')
    add("assign/json-token", f'{{"refresh_token": "{m(rnd(URLSAFE, 64))}"}}')
    add("assign/json-camel", f'{{"clientSecret": "{m(rnd(ALNUM, 34))}", "clientId": "web"}}')
    add("assign/rollout-json", rollout_output(
        f"{{\"user\": \"svc\", \"password\": \"{m(password())}\"}}"))
    add("assign/rollout-env", rollout_output(f"REDIS_PASSWORD={m(password())}\nstarting"))
    add("assign/docker-e", f"docker run -e MYSQL_ROOT_PASSWORD={m(password())} mysql:8.4")
    add("assign/compose", f"      - POSTGRES_PASSWORD={m(password())}")
    add("assign/k8s-literal", "kubectl create secret generic db --from-literal="
        f"password={m(password())}")
    add("assign/python-settings", f'SECRET_KEY = "{m(rnd(ALNUM + "!@#%^&*(-_=+)", 50))}"')
    add("assign/toml", f'token = "{m(rnd(ALNUM, 40))}"')
    add("assign/ini", f"db_pass = {m(password())}")
    add("assign/header", f"X-Api-Key: {m(rnd(ALNUM, 32))}")
    add("assign/cli-flag-eq", f"./deploy --api-token={m(rnd(ALNUM, 40))}")
    add("assign/cli-flag-space", f"vault login --token {m('hvs.' + rnd(ALNUM, 24))}")
    add("assign/mysql-flag", f"mysqldump --password {m(password())} orders > dump.sql")
    add("assign/dockerfile-env", f"ENV APP_SECRET {m(rnd(ALNUM, 32))}")
    add("assign/powershell", f'$env:AZURE_CLIENT_SECRET = "{m(rnd(URLSAFE, 40))}"')
    add("assign/github-actions", f"      NPM_TOKEN: {m(npm())}")
    add("assign/passphrase", f"GPG_PASSPHRASE={m(password())}")
    add("assign/url-query", f"https://api.example.com/v2/items?access_token={m(rnd(ALNUM, 40))}"
        "&page=2")
    add("assign/sql", f"CREATE USER app WITH PASSWORD '{m(password())}';")
    # Authorization: Basic, curl -u
    add("basic/header", f"Authorization: Basic {m(basic('admin', password()))}")
    add("basic/curl-H", f"curl -H 'Authorization: Basic {m(basic('ci', password()))}' "
        "https://ci.example.com/api/json")
    add("basic/rollout", rollout_output(
        f"> GET /api HTTP/1.1\n> Authorization: Basic {m(basic('deploy', password()))}\n"))
    add("basic/curl-u", f"curl -u admin:{m(password())} https://jenkins.example.com/api/json")
    # generic high-entropy values of secret-named keys
    add("generic/json-key", f'{{"key": "{m(rnd(ALNUM, 40))}"}}')
    add("generic/encryption-key", f"ENCRYPTION_KEY={m(hexsecret())}")
    add("generic/docker-auth", f'{{"auths": {{"registry.example.com": {{"auth": '
        f'"{m(basic("robot", password()))}"}}}}}}')
    add("generic/signing-key", f"signing_key: {m(rnd(B64, 44))}")
    add("generic/master-key", f"RAILS_MASTER_KEY={m(hexsecret(32))}")
    add("generic/credentials", f"credentials: {m(rnd(B64, 48) + '==')}")
    add("generic/rollout-escaped-key", rollout_call(f"export LICENSE_KEY=\"{m(rnd(ALNUM, 29))}\""))
    # more rollout shapes: escaped quotes inside a tool call
    add("rollout/escaped-quotes-openai", rollout_call(
        f"echo \"OPENAI_API_KEY={m(openai_legacy())}\" >> .env"))
    add("rollout/escaped-json-password", rollout_call(
        f"curl -d '{{\"password\": \"{m(password())}\"}}' http://localhost/login"))
    add("rollout/bearer-underscore", rollout_output(
        f"Authorization: Bearer {m(openai_project())}\n200 OK"))
    add("rollout/multi", rollout_output(
        f"GITHUB_TOKEN={m(github())}\nSTRIPE_KEY={m(stripe())}\nHF_TOKEN={m(hf())}\n"))
    # issue 29: a key whose line breaks became spaces, cut before its END line (what a backend
    # that shortens a pasted key writes), and the Twilio API key
    for kind, lines in (("RSA ", 3), ("OPENSSH ", 2), ("", 1), ("EC ", 2)):
        one_line = pem(kind, lines).replace("\n", " ")
        cut = one_line[:one_line.index("-----END") - R.randint(5, 20)]
        add(f"pem/one-line-cut-{kind.strip().lower() or 'plain'}",
            f"the key was {m(cut)}… and the rest of the message stays")
    add("pem/one-line-whole", f"pasted: {m(pem('OPENSSH ', 2).replace(chr(10), ' '))} done")
    add("pem/rollout-one-line-cut", rollout_user(
        "fix the deploy, key is " + m(pem("RSA ", 2).replace("\n", " ")[:150]) + "… thanks"))
    add("twilio/api-key-sid", f"TWILIO_API_KEY={m('SK' + rnd('0123456789abcdef', 32))}")
    add("twilio/in-prose", f"use the key {m('SK' + rnd('0123456789abcdef', 32))} for SMS")
    return out


def main() -> None:
    here = Path(__file__).resolve().parent
    lines = [
        "# FAKE secrets for memdeck's redaction tests: right prefixes, lengths and alphabets,",
        "# random content (make_corpus.py, fixed seed). None is a real credential.",
        "# A case is `[label] text` or `[label] <<<` ... `>>>`; ⟦…⟧ marks the secret values",
        "# (the markers are stripped before redaction). Lines starting with # are comments.",
    ]
    for label, text in cases():
        if text.startswith("<<<\n"):
            lines.append(f"[{label}] <<<")
            lines.extend(text[4:].split("\n"))
        else:
            assert "\n" not in text, label
            lines.append(f"[{label}] {text}")
    (here / "secrets.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{len(cases())} cases")


if __name__ == "__main__":
    main()
