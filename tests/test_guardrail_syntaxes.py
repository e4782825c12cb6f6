"""A credential given to a name is redacted in every common way of writing the assignment: config files,
source code of several languages, build files, logs. The value is random as real keys are; the names are
services' and generic ones."""

from __future__ import annotations

import random
import string

import pytest

from reqgate.pipeline.guardrail import mask

SYNTAXES = {
    "ini quoted": '{i}Token="{s}"',
    "ini spaced": '{i}Token = "{s}"',
    "ini bare": "{i}Token={s}",
    "ini bare spaced": "{i}Token = {s}",
    "json": '{{\n    "{i}_token": "{s}"\n}}',
    "json in a string": '\\{{\n    \\"{i}_token\\": \\"{s}\\"\n\\}}',
    "xml element": "<{i}Token>{s}</{i}Token>",
    "xml element on its own line": "<{i}Token>\n    {s}\n</{i}Token>",
    "yaml": "{i}_token: {s}",
    "yaml single quotes": "{i}_token: '{s}'",
    "yaml double quotes": '{i}_token: "{s}"',
    "yaml literal block": "{i}_token: |\n  {s}",
    "yaml folded block": "{i}_token: >\n  {s}",
    "c#": 'string {i}Token = "{s}";',
    "go var": 'var {i}Token string = "{s}"',
    "go short": '{i}Token := "{s}"',
    "go backticks": "{i}Token := `{s}`",
    "java": 'String {i}Token = "{s}";',
    "kotlin": 'var {i}Token = "{s}"',
    "php concat": '${i}Token .= "{s}"',
    "python": "{i}Token = '{s}'",
    "csv": "{i}Token,{s},",
    "logstash": '  "{i}Token" => "{s}"',
    "make =": '{I}_TOKEN = "{s}"',
    "make :=": '{I}_TOKEN := "{s}"',
    "make ::=": '{I}_TOKEN ::= "{s}"',
    "make :::=": '{I}_TOKEN :::= "{s}"',
    "make ?=": '{I}_TOKEN ?= "{s}"',
    "make +=": '{I}_TOKEN += "{s}"',
    "env export": "export {I}_API_KEY={s}",
    "header": "curl -H '{i}-Api-Key: {s}' https://api.example.com/v1",
    "log line": "[DEBUG] {i} client using key={s}",
    "numbered name": "{i}_token_2={s}",
    "url without a user": "redis://:{s}@{i}-cache:6379/0",
    "sql identified by": "ALTER USER {i} IDENTIFIED BY '{s}';",
    "mysql identified with": "CREATE USER '{i}'@'%' IDENTIFIED WITH mysql_native_password BY '{s}';",
    "piped registry login": "echo {s} | docker login -u {i} --password-stdin registry.example.com",
    "cookie header": "Cookie: theme=dark; {i}_session={s}",
    "pgpass line": "db.{i}.internal:5432:{i}:app:{s}",
    "vault kv put": "vault kv put secret/{i} user=app value={s}",
    "vault write quoted": "vault write secret/{i} ttl=1h value=\"{s}\"",
    "yaml binary tag": "{i}_password: !!binary {s}",
    "key in a sentence": "The API key for {i} staging is {s}, please rotate it.",
    "kubernetes env entry": "env:\n  - name: {I}_TOKEN\n    value: \"{s}\"\n  - name: LOG_LEVEL\n    value: debug",
    "ecs env entry": '"environment": [{{"name": "{I}_API_KEY", "value": "{s}"}}]',
    "hadoop property": "<property>\n  <name>{i}.secret.key</name>\n  <value>{s}</value>\n</property>",
    "cloudformation parameter": '{{"ParameterKey": "{i}Password", "ParameterValue": "{s}"}}',
    "ssm put-parameter": "aws ssm put-parameter --name /{i}/db_password --type SecureString --value {s}",
    "curl proxy user": "curl --proxy-user {i}:{s} https://example.org",
    "numbered password quoted": 'static_password07 = "{s}"',
    "npmrc auth": "//registry.{i}.example.com/:_auth={s}",
    "sshpass quoted": "sshpass -p '{s}' ssh {i}@host",
}
_ALPHABETS = {
    "base62": string.ascii_letters + string.digits,
    "hex": "0123456789abcdef",
    "lower": string.ascii_lowercase + string.digits,
    "upper": string.ascii_uppercase + string.digits,
}
_RANDOM = random.Random(20261124)
CASES = [
    (syntax, alphabet, name, "".join(_RANDOM.choice(_ALPHABETS[alphabet]) for _ in range(32)))
    for syntax in SYNTAXES for alphabet in _ALPHABETS for name in ("zendesk", "billing")
]


@pytest.mark.parametrize(("syntax", "alphabet", "name", "secret"), CASES,
                         ids=[f"{s}-{a}-{n}" for s, a, n, _ in CASES])
def test_a_random_value_given_to_a_credential_name_is_redacted(syntax: str, alphabet: str, name: str,
                                                               secret: str) -> None:
    text = "Config after the migration:\n" + SYNTAXES[syntax].format(i=name, I=name.upper(), s=secret) + "\n"
    sent = mask(text)
    assert "[REDACTED:" in sent
    assert not any(secret[i:i + 8] in sent for i in range(len(secret) - 7)), sent
