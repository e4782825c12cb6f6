"""Keys with no prefix of their own are redacted when a service name or credential word stands just before
them; the same shapes after a reference word (commit, sha, revision, foreign key), in a path or as a
file name stay, as real tickets are full of them."""

from __future__ import annotations

import pytest

from reqgate.pipeline.config_loader import load_default_config
from reqgate.pipeline.guardrail import screen
from reqgate.pipeline.schemas import RequirementPacket

CONFIG = load_default_config()
HEX40 = "9f2c4e1a7b3d5f60718293a4b5c6d7e8f9012a3b"
UUID = "6f1c2a9e-3b4d-4e5f-8a7b-9c0d1e2f3a4b"
MIXED = "q7Rt2ZpX9mKc4VwL8nBd3HsY"


def sent(body: str) -> str:
    report = screen(RequirementPacket(title="Configure the integration", body=body), CONFIG)
    return report.redacted.body


@pytest.mark.parametrize(("body", "secret"), [
    (f"Our wandb key is broken, the CI uses wandb {HEX40} for uploads.", HEX40),
    (f"Set the coveralls token:\n{HEX40}", HEX40),
    (f"statuscake: {UUID}", UUID),
    (f"Paste MAILGUN_SECRET-{MIXED} into the settings page.", MIXED),
    (f"The integration reads ACCESS code {UUID} from the vault.", UUID),
    (f"restpack_key = '{MIXED}'", MIXED),
    ("algolia api key: KqXvTzRbWmJpNcYdLsHf", "KqXvTzRbWmJpNcYdLsHf"),  # letters only, no words in it
    # A vendor's documented sample shape, with a real key pasted in its place as often as not.
    ("vatlayer SECRET abcdefghijklmnopqrstuvwxyzabcdef", "abcdefghijklmnopqrstuvwxyzabcdef"),
    ("tefter PRIVATE KEY zyxwvutsrqponmlkjihg", "zyxwvutsrqponmlkjihg"),
    # Random letters that happen to hold vowels, and alphabet runs, are no words: their letter pairs are rare.
    ("BEAMER_key = 'b_ByDfulghxvvmHbArJSFfQhxemJPQHOwplxuydlKEEbfe'", "ByDfulghxvvmHbArJSFfQhxemJPQHOwplxuydlKE"),
    ("pepipost=abcd1234efgh5678ijkl9012mnop3456", "abcd1234efgh5678ijkl9012mnop3456"),
    (f"Alerts go to https://acme.webhook.office.com/webhookb2/{UUID}@{UUID}/IncomingWebhook/"
     f"{HEX40[:32]}/{UUID}", UUID),
    (f"Hook: https://example.tines.com/webhook/{HEX40[:32]}/{HEX40[8:40]}", HEX40[:32]),
    # A capitalised credential word glued before the service's name ("KEYwandb", not "KE" and "Ywandb").
    (f"export KEYwandb-{HEX40}", HEX40),
    (f"acme_TOKENwandb-{HEX40}", HEX40),
    # A key pair after a word that elsewhere names data ("shortcut").
    (f"shortcut-private-key {UUID}", UUID),
    # The breach lists' favourites stand for themselves, with no name beside them.
    ("The staging admin still logs in with letmein42 after the reset.", "letmein42"),
    ("Default login is admin / P@ssw0rd! until first use.", "P@ssw0rd!"),
    ("My old password was iloveyou123, reset it to Password@2024.", "iloveyou123"),
    ("He reset it to P@$$w0rd2024.", "P@$$w0rd2024"),
    ("Login with *letmein42* now", "letmein42"),
    ("The kiosk still accepts qwerty456 for the admin account.", "qwerty456"),
])
def test_key_named_by_its_service_or_a_credential_word_is_redacted(body, secret):
    out = sent(body)
    assert secret not in out and "[REDACTED:" in out
    assert HEX40[8:16] not in out  # no piece of any key in the text either


def test_sendgrid_key_glued_to_a_word_is_redacted():
    key = "SG.APhb3zgjtx3hajdas1TjBB.H7Sgbba3afgKSDyB442aDK0kpGO3SD332313-L5528K"
    assert key[3:30] not in sent(f"left in staging: som{key}where")


@pytest.mark.parametrize("body", [
    f"Fixed in commit {HEX40} on the release branch.",
    f"The cloudsmith upload broke after commit {HEX40}.",
    f"wandb build {HEX40} failed",
    f"See https://github.com/acme/shop/commit/{HEX40} and https://github.com/acme/shop/blob/{HEX40}/pom.xml",
    f"Cannot move pack to /home/ci/atlassian-bamboo-2.7.3/repository/.git/objects/pack/pack-{HEX40}.pack",
    'ERROR: insert violates foreign key constraint "fk1c6b30e1581fb731"',
    f"lastVcsRevisionKey = {HEX40}",
    f"partitioned by sortKey-{HEX40}",
    f"Image digest sha256:{HEX40}{HEX40[:24]} pushed to the registry.",
    f"Mesos task datadog-monitor.{UUID} was lost.",
    "The secret rotation job ran at 2024-05-01T10:20:30Z for build 1.2.3-SNAPSHOT.",
    "Use the access token from ${SECRET_TOKEN} or {{secret}}; never changeme or EXAMPLE values.",
    "Token alphabet: ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz",
    "The TOTP secret alphabet ABCDEFGHIJKLMNOPQRSTUVWXYZ234567 is base32.",
    # a class name reaches the entropy of a sample key; the word test comes first
    "The secret key ArrayIndexOutOfBoundsException is thrown when the vault is empty.",
    "The bean map holds the key JdkDynamicAopProxy for the proxy of the web runtime.",
    f"Shortcut key {UUID[:8]} opens the palette; the sort_primary_key = '{HEX40}' orders rows.",
    "The login form posts secret-Base64EncodedString2 to the server.",
    "Django's sign-up form checks that password1 and password2 match; the welcome page follows.",
    # Promotions, seasons and themes named like weak passwords; a file named after one.
    "Apply coupon WELCOME10 at checkout; the FOOTBALL2024 promo and the Superman2025 theme pack are broken.",
    "Support for QWERTY105 layouts; the field password12 is missing a label.",
    "Switch the qwerty layout to azerty; qwerty12 is the test layout's id.",
    "Import the football2023 season fixtures; the Dragon64 emulator crashes on monkey99.",
    "The string p@ss is shown on the login page; see password123.txt for the list.",
    # Kebab-case names after a credential word are names, not keys.
    "The ingress uses secret-tls-wildcard-2024v2 now; mount token-gke-prd-euw1-np01 into the pod.",
    "Rotate password-svc-acct-dwh01-prd2 next week; Key Vault secret name is token-AKS-PROD-EU2-CLUSTER01.",
    "LOGIN-PAGE-V2-REDESIGN-Q3 is the epic; see SECRET-ROTATION-RUNBOOK-V2-2024Q3 in Confluence.",
    "ACCESS-SW01-BLDG4-FLOOR2 port Gi1/0/24 is flapping; folder KEY-MGMT-HSM01-RUNBOOKS moved.",
    # Kafka's and MQTT's client ids are names.
    "spring.kafka.client-id=orders-service-7f3a9b21 and mosquitto_sub --client-id sensor-node-7f3a9b21",
    # Service accounts and files after -u with a colon, and placeholders named short inside braces.
    "Command sudo -u postgres15: permission denied; python -u train2024.py: fails; curl -u Admin2024: x",
    'var cs = $"Server=db01;User Id=sa;Password={sqlPwd2019};"; password = "{userPwd01}"',
])
def test_hashes_ids_paths_and_placeholders_in_tickets_stay(body):
    assert sent(body) == body
