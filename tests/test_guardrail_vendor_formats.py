"""Vendor token formats found by prefix alone: a token in ticket text is redacted whole, near-misses are not."""

from __future__ import annotations

import pytest

from reqgate.pipeline.guardrail import mask

# (prefix, body) of made-up tokens in the published shape of each format: random bodies, none taken from a
# scanner's fixtures.
TOKENS = (
    ("glffct-", "bk2lWVv7ZSMXtVckc-DN"),
    ("ctp_", "e2Kh9rh5ndYXq29e1UQBBOtaOC41EPewFKzW"),
    ("cto_", "DeqwgMbqsH209BCriXbe0neYlKri0s23QgMo"),
    ("ctr_", "l4grsnuFXqhLmPLEdzM8C4eLGUiMTrgQ9mxW"),
    ("eyJ0eXAiOiAiVENWMiJ9.", "5xSISyPy9cMc7MntusAlIqSTlKtwBoM7uCqf.D0XiDYIVnoFwqRRXhUrz8xRu89YXoQr4Smz4MiKQHSm9xvwG"),
    ("ddp_", "07XWyNwuifJ3YxEu64RXd7bjpOwhtV2wqVkr"),
    ("ddw_", "5yz7DSVBtFaPmFoNkkx5ZZX2YfLeFA7yzl8d"),
    ("tk-us-", "hptIoj8Bx8K0YE3zC2Fmh5VuojQEKz0yLp9F9i3CLMjqawOP"),
    ("sk-pyx-", "fTrERQtfpNWKqGFRHrm6U49Y1waFwxmqUtwf0iUsaD6UcH4gf4sjLO50mI0Itxp5"),
    ("tp-pyx-", "2suMSlVvPcjfNMVgbGIliqqqeVzxUsKsREbdqOQbDfFqQr"),
    ("cio", "U4KQFozIiszbCGYyopEj7XxYK72xV0xf"),
    ("eyJrIjoi", "QrWYQITrpGtm415fGzt8VRMGKGcTL0OWPLQoNWONXqaJXBFfqzF6EBlvXzg7fnFGcBvVABf7TckKclJTz40Dz6xFA4a1n185kQCP="),
    ("A3T", "O28K8F0D5P1GNAIUD"),
    ("bedrock-api-key-", "YmVkcm9jay5hbWF6b25hd3MuY29tkoQOCwVD71Ap5V4xT5ipqvazY3348Iid2lwlYTZ9zSaVFOlpTX8dcwc7lT2Suu9DqnnUqJn7fxbsMuZAPDLkiqnOpnCz0xWwtbBmYGKuoABZi6EwhYBFx3U2"),
    ("fm2_", "B22PUyODKffcFR9+ynpf3+6W4lg+93vTqOuC6aTk9HbuV31u8xxc/jch+KYUcFBEYNMNTjvrDB4iSG4/peFQaYxkTTDS0dnGCsufCURO7pYVkaBh8j384wkK"),
    ("fm1a_", "Iay/ehEy1o9AaL4JOh+gZuPKT8L2sY3yhcSfuJ10qWt65UEy99oTRDaunRuV4WuVD0IofCpScd9ySHyBN2oFRFfMg2Fr7f1nEkbuyFLCgGlnTytT/O9uqCMy"),
    ("fm1r_", "wavPVyAmoq35JffDSAZ9NPEn6/FWUJOW/pLeTC4lvlS0oAeqFY4qYIG+AsW3MJo7dVhQZy86j38j71rbRJz2bNA62H68MQZcU8J4UQWD5buSUtGoVATS8j9+"),
    ("sha256~", "xt3ieDxlkFn0yENCUgFPHJzJRcNiLsSbVVOQX8ebLSf"),
    ("dnkey-", "puz9340sundzqnv7ie2xwcd2ib-pf4bq1osof8celv7cj2oyrbfve420md3o2hwe2hq72nf9aevsyyz"),
    ("web_", "k3v9q2m7x1c8z5b4n6w0r2t7y9u1i3o5"),
    ("castai_v1_", "66if93Tzxf4FNriFilxXI8vba39gqjditWUjxF7gB1HRtBfsJE6AyaL90Qh0FB3x_6pKegc6z"),
    ("4b1d", "buKEgKQ8SA9f3BbgkSgnH7TJAMHwMiAa2zqjny"),
    ("akab-", "iud7dsugnj7s1u5j-j54dwwkg9ylzpnq5"),
    ("v1.0-", "36bd942f201406fde7e11f94-f411e8d65605821d12a1cb09d01be5bb9a48ba4feba54cc6ac4f932216a6b6441583961042100bccbdee83ec73756524fbb66f9c0ebff6f6a9bf1a54066c852dc9d036f42c037f4183"),
    ("NRAA-", "35675274f7caf4c47d4b65e2f5f"),
    ("NRIQ-", "CWAoazralrD5Ac0kHcxdCDyNyp0BRZyr"),
    ("BBFF-", "bP9EIxkdPmbpGt6Q3HYc3TVkmNhDuC"),
    ("aio_", "A3VTBdUozbCV2i5aSdN5BvDXmO2P"),
    ("sm_aat_", "U0JvuSuDO3zmZrj1"),
    ("sm_pat_", "J4UYghVLtr8P7l5A"),
    ("sm_sat_", "QwsdmAhG5zu71Eo2"),
    ("p8e-", "8x0nmzjaaxguuuerjehg7pvafaim3pvm"),
    ("authress_", "repgdox5az7p.6315k.acc_w1wdf1x367cwa94018y8.5c6SSeyMWrHXCOMY2zKFAnIP3sy2pfrZtHU0NLDWCB6eH0a9pBFaBkLMWxjJ"),
    ("scauth_", "kr401sbm9ns7.xag92.acc-5t86kbdebv969owd4o7r.0t6KqkeNXakAKhATCwWahJ8RoDTJ3dlHdjogXFtDAOUnnCl4lnVygQzdjCpY"),
    ("jina_", "uAA191N3TZoqcq62wZUadWjsYED0JDfvcSxvD1vHSClyxcvzmqd94EREUt6a"),
    ("fc-", "a0e89e7cf005d0fe3bd526661397c26a"),
    ("claude.ai/code/session_", "VrEStDbz0jPggweXwkG8t2WX"),
    ("sk_prod_", "QTtWCUCZ48gEh8RMupl7YMcgFKXUJllaGC96vEOg"),
    ("rk_prod_", "rIKlwRKqXMJvis2nBe7nPIinTLEJbvua7oTAIFqz"),
    ("FLWSECK_TEST-", "1ca45f80ddfd"),
    ("s-s4t2af-", "6672da54319a6160e418454560a6e00aebdeef469f49dc127da685d9db8e5931"),
    ("5Aep861", "5TdmYRKQ4CX182eFYWgw9L4cvuqVKVnCvvwdgwvi.llWWwgl0yDEs7xSTAS8s6KUwRadlYtaF66vabjJbzSx2b"),
    ("3MVG9", "DUlAXJMFcy6XNCTMtCDIEC1f8WTT9JuI82wEfT7Y8O5wnun4GB.hFdHdi7nhOxcRznnhAgJGyk7qRTXvsoZdtPsOaAI"),
    ("EAAM", "0mqWurqNsuWss6KqDFof8dud0g2Bqr8Rr9rETEvZCrZIeahzHSfNLfBWRC61caxrquyFefh1qK0jFXp7fRK3x3rhpATqvw9x0CfovdQCCzH21Cz9SQF945XFWv1GZ9zfX34SQGXYqHDQBSMjE4Fsxd"),
    ("EAAC", "xzD42kdrUTaEYNH938FIt1wqfb74otrPKxLJHb6mYDkYyhBYAI68m8TjpELjzZ8X7WWdfhbzuQzAoH6gmPLjZUkLoWeIVaarnuW3aBfudnYqlo1QumA0dXj634YGEK4zcL8C52TKNn1tJqqgYFZDrG"),
    ("sat.", "oow3584htWij2dBUMSEHn1.akR5ZJ3Q6F6uwnrcJUqnrzLd.kCtdcq1IfXClRaJgj4Xt"),
    ("pat", "W46t8Vtfi3MJYH.3af541f8ccd9fc70cbe32e438eef9a0879e58258038aac0788945aa0c1a8d7eb"),
    ("pk_", "0104548_6APOGJP5JED6XFTJ7U1D7T7VPRABAGM8"),
    ("hf_", "reWNTECOTWDKIGhovOziFyJsXNkfuFVmcV"),
    ("s.", "d4UYETIay2BV6DfVPClogqoP"),
    ("sq0idp-", "Tk3wqhRbzcnmPLeyAdvXgs"),
    ("RGAPI-", "09756266-621b-d5cf-3354-d665603db74a"),
    ("AVNS_", "q8Tz3Lw0Nf5Kd1Jx7Rb2"),
    ("amzn.mws.", "3f2c1b7e-9d4a-4c8b-a1e2-7f6d5c4b3a21"),
    ("csk-", "c5z3zgheqy3yprxwcjyhpz3l6hpgwoumw6ooqus1tvssihh9"),
    ("flp_", "PrAb6BFZYNtwhLZ4RGvROFiB4doMqFbbygtGVuDV60diQY"),
    ("tgp_v1_", "7v_QYo5e48bC48i0RKCXfk5QFETZqunjCQ6M9I6FXMu"),
    ("zpka_", "l9hi6dserwrxcn8zc834omripoksqaxb_60845ab3"),
    ("key_", ("d8aeab5bb2f895f1ac1c83fdef4006a06ddbed513aaa1b58ea4a6933fbd6c58b"
              "3a4c68fca80fda114aab5277936c525d1ec2acac427fddf094110da1846ecc03")),
    ("cflt", "tXyCEhk7N6IBwbuv/87m2C+HYQJkLYU5vGAKkZWdQxowWteXENEzn+pax3Gz"),
    ("live_auth_", "0ae65cf2176bdf5618e54c1d4d22ec14"),
    ("pa-", "MlFsXrATpmoQPSXr5pfYO1xH9_vAn5yqywBr3b1CJtz"),
    ("sk-lf-", "9e55d656-f879-4548-99fd-c050ba31b141"),
    ("rootly_", "a5ce3a6930c46f9c448cdd7460823158e73484ebdd477c3c14adaf3647ae6812"),
    ("salad_cloud_user_", "gJtqXo8dxAB7ggLyQPvg7qJRPsm4uhfD5A5HfzMBoldsLycel"),
    ("tines.com/webhook/", "ebzcx5ou0o9c6noatd1wngiodivaw3xb/bfp1uicefoxvccy29myq0w8qjkpjhuj3"),
    ("pdl_live_apikey_", "01j5jf2pefs1pnny9pf6r24vmp_r5BfRmNqfJp4XRjwVjrQtX4Bj2"),
    ("pdl_sdbx_apikey_", "01sk6sw5djzs8as72q0kbxzqe7_ZfWcnlif8KllLYTdtL6apOBSH5"),
    ("napi_", "CL0ezIcYnBAz1OvohHU4QGwYAsMaY84ckjBFqMAqNul4X5LycCyqe8rWB43vC2tp"),
    ("tskey-", "auth-8YFRpHsHYSkACNTRL-FcN4dFcgPWXDVte9iazXJmn8avIikij4"),
    # Example Tailscale keys are short.
    ("tskey-", "secret-40917352-b7qd"),
    ("re_", "qnRUQ4Gf_vPMLz6V5CAzVwkmxcWLGfuFk"),
    ("pk_", "nLkjDDAbXfej6XwXibw2CObkzBzqnq4Jto"),
    ("dt0s16.", "B4PB1SBN7I9JWKAG44XD8F8N.MNWK8DB6TQUTZ9LUJ14Y3G7WHMH3N3QBD98BO6G5MS872OCL59JYJRTRC5ZYZYSQ"),
)

# A prefix followed by a word, a body too short, or a documentation placeholder.
NEAR_MISSES = (
    "Rename ctp_configuration_loader before the release.",
    "The ddp_deployment_pipeline job failed twice.",
    "See aio_read and aio_suspend in the man page.",
    "The cio says the budget is fine.",
    "Stop the sat. reading cron from running on weekends.",
    "Use sha256~ as separator only when hashing.",
    "Export the Grafana API key as eyJrIjoi...",
    "The New Relic key NRAA-1234 was revoked.",
    "Use jina_" + "x" * 60 + " in the docs example.",
    "Set FIRECRAWL_API_KEY=fc-" + "x" * 32 + " first.",
    "Template: tk-us-" + "X" * 48 + " goes here.",
    "Primary key pk_orders_customer_id was dropped.",
    "Rename pk_12345678_customer before migrating.",
    "The pathToFileInRepository.configuration value was wrong.",
    "Version v1.0-beta ships next week; v1.0-rc1 did not.",
    "Upgrade the A3TEST build agent.",
    "Run claude.ai/code/session_ only from the browser.",
    "Connect with akab-host.example.net as host.",
    "kubectl logs px-api-service-deployment-5d8f9c7b6d-abcde1",
    "See NotificationDispatcherImpl.handle.processIncomingKafkaMessages for details.",
    "s.makeKubeConfigController = args",
    "&hf_servingcellpriorityparametersdescription_h_prio",
    "Pass tskey-reusable-ephemeral to the node.",
    "Call napi_create_function and napi_get_value_string_utf8 from the addon.",
    "See re_register_customer_account_handler in the module.",
    "The api-gateway-deployment-2024 rollout finished.",
    "The sdk-version-4 bump broke the build.",
    "Keep web_applicationfirewallpolicyname as it is.",
    # Ids and names that open like a vendor's prefix: request and pod ids, bundles, sessions, tables.
    "Request id api-3f2c1b7e-9d4a-4c8b-a1e2-7f6d5c4b3a21 failed with 502.",
    "Pod sdk-5b1e8c2a-7d3f-4e9a-b1c2-1d2f3a4b5c6d restarted.",
    "Loaded bundle web_5d41402abc4b2a76b9719d911017c592.js from the CDN.",
    "Session live_5d41402abc4b2a76b9719d911017c592 was dropped.",
    "Table salad_cloud_organization_members has no index.",
    "Use pk_customeridorderidproductidlineitem as the index name.",
    "Rename live_auth_settings_loader next sprint.",
    "Org id 00D5g000004ABCDEAA is on the EU instance.",
    "thingsboard.cloud/api/v1/YOUR_ACCESS_TOKEN/telemetry",
    "Post to https://contoso.webhook.office.com/webhookb2/<group-id>@<tenant-id>/IncomingWebhook/<id>/<owner-id>",
    "Set PADDLE_API_KEY=pdl_live_apikey_XXXXXXXXXXXXXXXXXXXXXXXXXX_XXXXXXXXXXXXXXXXXXXXXXXXXX first.",
    "The docs show tgp_v1_" + "x" * 43 + " as the key.",
    "The key_" + "X" * 128 + " is a placeholder.",
    "A MaxMind key looks like XXXXXX_XXXXXXXXXXXXXXXXXXXXXXXXXXXXX_mmk in the docs.",
    "Voyage: pa-example" + "0" * 33,
    "Deploy pa-frontend-release-candidate-build-2024-11-23 today.",
)


def leftover_pieces(token: str, text: str) -> list[str]:
    return [token[i:i + 8] for i in range(len(token) - 7) if token[i:i + 8] in text]


PREFIXES = [prefix for prefix, _ in TOKENS]


@pytest.mark.parametrize(("prefix", "body"), TOKENS, ids=PREFIXES)
def test_token_in_a_sentence_is_redacted_whole(prefix, body):
    token = prefix + body
    redacted = mask(f"After the deploy I pasted {token} into the runbook, please rotate it.")
    assert leftover_pieces(token, redacted) == []
    assert redacted.startswith("After the deploy I pasted [REDACTED:")
    assert redacted.endswith(" into the runbook, please rotate it.")


@pytest.mark.parametrize(("prefix", "body"), TOKENS, ids=PREFIXES)
def test_token_glued_to_a_name_or_quoted_is_redacted(prefix, body):
    token = prefix + body
    for text in (f'API_KEY="{token}"', f"token: '{token}'."):
        assert leftover_pieces(token, mask(text)) == []


@pytest.mark.parametrize(("prefix", "body"), TOKENS, ids=PREFIXES)
def test_short_body_is_left_alone(prefix, body):
    # A prefix that is itself random-looking (TeamCity's encoded header) may still count as a random token.
    assert "[REDACTED:vendor_token]" not in mask(f"The prefix {prefix}{body[:6]} alone is not a key.")


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_near_misses_are_left_alone(text):
    assert mask(text) == text


# Formats without a prefix, known by their shape: Mailchimp (hex and a datacenter), Discord bot tokens, Azure AD
# client secrets, Microsoft's identifiable keys, MaxMind, Terraform Cloud.
SHAPED = (
    "3f9c2a7e1b4d8f60a5c3e9d7b1f2a4c8-us12",
    "MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs",
    "Xk37Q~t2Vb9LmZ_8rW4nKp.6yHc1JdFq-s3Gx0A",  # Azure AD client secret
    "9pLNLqtSenublCeELW0u7e5BXithiFDG5+ASbO16K9a=",  # Azure Service Bus
    "453f/LSiyQKuhAIXAvydwGplLyy6rAB3MAzCaDpV5ch=",  # Azure Cache for Redis
    "L7HRgD5Y19qLUriAUVMBdJUriJSVrrktOp0sY3lFupLhcFi8T6x/G+l+hBSUc4/C4YVsDYIq10QS+AStZ2u7Vw==",  # Azure Storage
    "5n8FufxHfjgBUWz0oLp+cxhvgCSE7ZPhgpAhHUt+AJG4xNwHPnxNb8N4Nza0/M9V9u2wCR/acIGeACDbfmdnUA==",  # Azure Cosmos DB
    "Z2iAQHCagCEZn6At3EGndPKdjVqm_aWk1Pl5mEAhahVYAzFufmCLvg==",  # Azure Functions
    "DoM55ofS7SeiHcRuUNBegeW3CQ7Ac8jz9rIC3OHYXIAzSeCufUfP",  # Azure Search
    "gsJFwhJbumv5NYDaMqjsVJZ5XXhpX9/z2p7r/EppQE+ACRCvUX4w",  # Azure Container Registry
    "yTzBx4I8VWlFemkiLxoK5r8q7oUoo1ej2ODJWA3il7fbJQSvbY8HJQQJ99sAojdUU63AfAkY3obgAZDO2rVu",  # Azure DevOps
    "5YZH9QUZdozZPhzXRoIo1u2xYa3UrknadLqBvcZ7AUiOld59WjqGJQQJ99AJ2rvE8MjKV6yMuOTmnueuXkNv",  # Azure AI services
    "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",  # MaxMind
    "u2rj98fjw3x1j3.atlasv1.utw2nCvAovTK1KVT8DQ8CMwV4A-sN4c-tk7kHbMFEAkpB_HoX9JqU42rpUK2h23yo13",  # Terraform Cloud
    "Xq4Tz08KmHi.nFm8ld8fn5FcV4QS2fcJvRN7Y2-e5BJtGp-1JxY8wPf",  # Azure Bot Service
)


@pytest.mark.parametrize("token", SHAPED)
def test_a_token_known_by_its_shape_is_redacted_whole(token):
    redacted = mask(f"The integration still uses {token} in production.")
    assert leftover_pieces(token, redacted) == [] and "[REDACTED:vendor_token]" in redacted


@pytest.mark.parametrize("text", [
    "Released as 3f9c2a7e1b4d8f60a5c3e9d7b1f2a4c8-usr12 on the mirror.",
    "Package org.mule.module.http.internal.listener.grizzly.GrizzlyServerManager failed to start.",
])
def test_look_alikes_of_a_shape_are_left_alone(text):
    assert "[REDACTED:vendor_token]" not in mask(text)


# Tokens holding a character that ends a run of token characters: the secret is redacted, the host may stay.
TEAMS_PATH = ("f8c43fc0-6f01-48ef-86f2-127aae09cc81@70e512ce-abda-47f6-a7e1-9dbc0f3d6e91/IncomingWebhook/"
              "a5d83fc32c3f0136634709334695f451/a8d756fa-75a8-42a4-b181-43edc2ea8fff")
ACROSS = (
    ("", "00DtL475dmvaUD4!G8hSaZbCvesHSkjrxdMSUsTGMp57OuF7keF7mwpMAfCiN41wVQvIYqXXAzB8mxXaOR0lGgJNYApTBdGudWjKtZ.T6DYggFoh"),
    ("https://contoso.webhook.office.com/webhookb2/", TEAMS_PATH),
    ("https://outlook.office.com/webhook/", TEAMS_PATH),
    ("http://thingsboard.cloud/api/v1/", "0y6nqt9q5z2ih72sn4um"),
    ("coap://demo.thingsboard.io/api/v1/", "Xq7bN2kLp9RzT4mW1vYc"),  # the server makes them in mixed case
    # Tickets write GUIDs with other letters in them.
    ("https://contoso.webhook.office.com/webhookb2/", ("8e1c40b7-ab52-4d6f-kmnp-0c7d2e9a41f3@8e1c40b7-ab52-4d6f-kmnp-"
     "0c7d2e9a41f3/IncomingWebhook/93d0f1a6c2b74e85a1f0d3c9b6e2a7f4/5b2e9c1d-7f3a-4e8b-qrst-a6d0c4f9b1e2")),
)


def test_a_thingsboard_token_goes_and_its_url_stays():
    url = "https://demo.thingsboard.io/api/v1/Xq7bN2kLp9RzT4mW1vYc/telemetry"
    assert mask(f"curl -X POST {url}") == "curl -X POST https://demo.thingsboard.io/api/v1/[REDACTED:vendor_token]/telemetry"


# Keys carried in a URL: the URL from its scheme on is the credential.
URL_KEYS = (
    "https://discord.com/api/webhooks/1143503308481384529/FpatbTfKYNPGYCpZMbeY71fjdRxxCDQj5kfskxbOJnB-SmchLwa5RYOnBuz",
    "https://hooks.slack.com/workflows/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",
    "https://mainnet.infura.io/v3/765760381936db1af1c600fa6d980cd1",
    "wss://mainnet.infura.io/ws/v3/765760381936db1af1c600fa6d980cd1",
    "https://eth-mainnet.g.alchemy.com/v2/NVmPSTCBKnwRCtiqsYhnBTvbLlU2g6nf",
)


@pytest.mark.parametrize("url", URL_KEYS)
def test_a_key_carried_in_a_url_goes_with_the_url(url):
    assert mask(f"const provider = new Provider('{url}');") == "const provider = new Provider('[REDACTED:vendor_token]');"


@pytest.mark.parametrize("text", [
    "https://mainnet.infura.io/v3/YOUR-PROJECT-ID",
    "https://mainnet.infura.io/v3/${INFURA_KEY}",
    "See https://docs.infura.io/api/networks/ethereum for the v3 endpoints.",
])
def test_gateway_urls_without_a_key_stay(text):
    assert mask(text) == text


def test_openweathermap_s_appid_and_a_firebase_registration_token_are_redacted():
    url = "https://api.openweathermap.org/data/2.5/weather?q=Oslo&appid=bb487775fb218066cc383965d592fb7f"
    assert mask(url) == "https://api.openweathermap.org/data/2.5/weather?q=Oslo&appid=[REDACTED:vendor_token]"
    fcm = ("awcj-OXe9Ut:APA91b1v9LS2WXMWDCNfyH2_tF6hdyPFY_PsAc1Ezq8YDPH6V0In2QdWg8zqCF-DpW8hh1sCKlMj6KG0TV2H5zvxMqpTXUB"
           "h13tcIKQ6kiUNPAlITVIyJ7kczl07Bbx2Bc9wqmqZBkE-")
    assert mask(f'registerDevice("{fcm}");') == 'registerDevice("[REDACTED:vendor_token]");'


def test_a_teams_webhook_goes_whole_with_its_host():
    url = "https://contoso.webhook.office.com/webhookb2/" + TEAMS_PATH
    assert mask(f"Alerts post to {url}.") == "Alerts post to [REDACTED:vendor_token]."
    assert mask(f'"webhook": "{url}"') == '"webhook": "[REDACTED:vendor_token]"'


@pytest.mark.parametrize(("before", "token"), ACROSS)
def test_a_token_across_run_breaks_is_redacted(before, token):
    redacted = mask(f"The alert job posts with {before}{token}. Please rotate it.")
    assert leftover_pieces(token, redacted) == [] and "[REDACTED:vendor_token]" in redacted
    assert redacted.endswith(". Please rotate it.")


# Near misses of the new formats: one character short or long, or a character outside the alphabet.
@pytest.mark.parametrize("text", [
    "rootly_" + "a5ce3a6930c46f9c448cdd7460823158e73484ebdd477c3c14adaf3647ae681",
    "csk-c5z3zgheqy3yprxwcjyhpz3l6hpgwoumw6ooqus1tvssihh",
    "flp_PrAb6BFZYNtwhLZ4RGvROFiB4doMqFbbygtGVuDV60diQYx",
    "zpka_l9hi6dserwrxcn8zc834omripoksqaxb_60845ab",
    "sk-lf-9e55d656-f879-4548-99fd-c050ba31b14",
    "thingsboard.cloud/api/v1/0y6nqt9q5z2ih72sn4u/telemetry",
    "re_qnRUQ4Gf_vPMLz6V5CAzVwkmxcWLGfuFk0",
    "J94E10_qZCTdYDBeFe4JdynlVOOhT11lhUu_mmk",
    "00DtL475dmvaUD4!G8hSaZbCvesHSkjrxdMSUsTGMp57OuF7keF7mwpMAf",
    "https://contoso.webhook.office.com/webhookb2/" + TEAMS_PATH.rsplit("/", 1)[0],
])
def test_near_misses_of_new_formats_are_not_vendor_tokens(text):
    assert "[REDACTED:vendor_token]" not in mask(f"Checked {text} against the format.")

