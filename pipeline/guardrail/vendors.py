"""Vendor token formats, written down as data: a fixed prefix, the alphabet of the rest and its length.

The facts come from the providers' own documentation and the public rule sets of gitleaks, trufflehog,
Nosey Parker and kingfisher. A token is found without any credential name beside it: a run of token
characters whose start is one of these prefixes, with a body of the right alphabet and length.

Finding is linear: the text is cut into maximal runs of token characters once, and each run's first
characters are looked up in a dictionary of prefixes (one lookup per distinct prefix length). The few
tokens that hold a character ending a run ("!", "@") are looked for by patterns that open with a literal.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from reqgate.pipeline.guardrail.budget import MAX_INNER_STARTS, PROBE, capped
from reqgate.pipeline.guardrail.shapes import alphabet_typed, pronounceable, says_fake

Range = tuple[int, int]

# Alphabets of token bodies.
B62 = "b62"  # A-Z a-z 0-9
B62_ = "b62_"  # plus "_"
URLSAFE = "urlsafe"  # plus "_" and "-"
B64 = "b64"  # A-Z a-z 0-9 + / =
ANY = "any"  # any token character: letters, digits, _ - . + / =
HEX = "hex"  # 0-9 a-f, either case
LOWER = "lower"  # a-z 0-9
UPPER = "upper"  # A-Z 0-9

_ALPHABETS = {
    B62: re.compile(r"[A-Za-z0-9]+"),
    B62_: re.compile(r"[A-Za-z0-9_]+"),
    URLSAFE: re.compile(r"[A-Za-z0-9_-]+"),
    B64: re.compile(r"[A-Za-z0-9+/]+=*"),
    ANY: re.compile(r"[A-Za-z0-9_.+/=-]+"),
    HEX: re.compile(r"[0-9a-fA-F]+"),
    LOWER: re.compile(r"[a-z0-9]+"),
    UPPER: re.compile(r"[A-Z0-9]+"),
}


@dataclass(frozen=True)
class Format:
    vendor: str
    prefix: str
    alphabet: str
    min_len: int  # of the body after the prefix
    max_len: int = 1024


# One row per published prefix. Bodies are given generous bounds: a vendor that lengthens its tokens
# (Anthropic, OpenAI and GitHub all did) must not slip through.
FORMATS: tuple[Format, ...] = (
    # Source forges and CI
    Format("GitHub personal access token", "ghp_", B62, 30, 255),
    Format("GitHub OAuth token", "gho_", B62, 30, 255),
    Format("GitHub user-to-server token", "ghu_", B62, 30, 255),
    Format("GitHub server-to-server token", "ghs_", ANY, 30, 1024),
    Format("GitHub refresh token", "ghr_", B62, 30, 255),
    Format("GitHub fine-grained token", "github_pat_", B62_, 40, 255),
    Format("GitLab personal access token", "glpat-", URLSAFE, 20, 255),
    Format("GitLab pipeline trigger token", "glptt-", URLSAFE, 20, 255),
    Format("GitLab runner token", "glrt-", URLSAFE, 20, 255),
    Format("GitLab runner registration token", "GR1348941", URLSAFE, 20, 255),
    Format("GitLab deploy token", "gldt-", URLSAFE, 20, 255),
    Format("GitLab feed token", "glft-", URLSAFE, 20, 255),
    Format("GitLab OAuth secret", "gloas-", URLSAFE, 20, 255),
    Format("GitLab SCIM token", "glsoat-", URLSAFE, 20, 255),
    Format("GitLab agent token", "glagent-", URLSAFE, 20, 255),
    Format("GitLab incoming mail token", "glimt-", URLSAFE, 20, 255),
    Format("GitLab CI job token", "glcbt-", URLSAFE, 20, 255),
    Format("GitLab feature flag client token", "glffct-", URLSAFE, 20, 255),
    Format("Bitbucket app password", "ATBB", B62, 28, 64),
    Format("Atlassian API token", "ATATT3", ANY, 60, 512),
    Format("Atlassian Connect token", "ATCTT3", ANY, 60, 512),
    Format("CircleCI personal token", "CCIPAT_", URLSAFE, 30, 128),
    Format("Buildkite token", "bkua_", B62, 30, 64),
    Format("Codemagic token", "codemagic_", B62_, 20, 128),
    Format("Chief Tools personal token", "ctp_", B62, 30, 255),
    Format("Chief Tools access token", "cto_", B62, 30, 255),
    Format("Chief Tools refresh token", "ctr_", B62, 30, 255),
    Format("TeamCity token", "eyJ0eXAiOiAiVENWMiJ9.", ANY, 80, 100),
    Format("Deno Deploy token", "ddp_", B62, 36, 64),
    Format("Deno Deploy webhook token", "ddw_", B62, 36, 64),
    Format("Scalingo token", "tk-us-", URLSAFE, 48, 64),
    Format("SonarQube token", "sqp_", HEX, 40, 40),
    Format("SonarQube user token", "squ_", HEX, 40, 40),
    Format("SonarQube analysis token", "sqa_", HEX, 40, 40),
    Format("Dependency-Track key", "odt_", B62_, 20, 128),
    Format("Docker Hub token", "dckr_pat_", URLSAFE, 20, 128),
    Format("Docker Hub OAT", "dckr_oat_", URLSAFE, 20, 128),
    Format("JFrog reference token", "cmVmdGtuOjAxOj", B64, 40, 256),
    Format("JFrog API key", "AKCp", B62, 60, 128),
    Format("npm token", "npm_", B62, 36, 36),
    Format("PyPI token", "pypi-AgEIcHlwaS5vcmc", ANY, 50, 512),
    Format("PyPI test token", "pypi-AgENdGVzdC5weXBpLm9yZw", ANY, 50, 512),
    Format("pyx token", "sk-pyx-", B62, 45, 80),
    Format("pyx trusted publishing token", "tp-pyx-", B62, 45, 80),
    Format("crates.io token", "cio", B62, 32, 32),
    Format("RubyGems key", "rubygems_", HEX, 48, 48),
    Format("NuGet key", "oy2", LOWER, 43, 43),
    Format("Clojars token", "CLOJARS_", LOWER, 60, 60),
    Format("Pulumi token", "pul-", HEX, 40, 40),
    Format("Terraform Cloud token", "atlasv1.", URLSAFE, 60, 128),
    Format("Prefect token", "pnu_", B62, 36, 36),
    Format("Octopus Deploy key", "API-", UPPER, 25, 32),
    Format("Doppler token", "dp.pt.", B62, 40, 64),
    Format("Doppler CLI token", "dp.ct.", B62, 40, 64),
    Format("Doppler service token", "dp.st.", ANY, 40, 128),
    Format("Doppler SCIM token", "dp.scim.", B62, 40, 64),
    Format("Doppler audit token", "dp.audit.", B62, 40, 64),
    Format("Doppler service account token", "dp.sa.", B62, 40, 64),
    Format("HashiCorp Vault service token", "hvs.", ANY, 24, 512),
    Format("HashiCorp Vault batch token", "hvb.", ANY, 24, 512),
    Format("HashiCorp Vault recovery token", "hvr.", ANY, 24, 512),
    Format("Vault legacy token", "s.", B62, 24, 24),
    Format("Aiven service password", "AVNS_", URLSAFE, 15, 64),
    Format("Amazon MWS auth token", "amzn.mws.", ANY, 36, 36),
    Format("Sourcegraph token", "sgp_", URLSAFE, 40, 128),
    Format("Sourcegraph local token", "slk_", HEX, 40, 64),
    Format("Grafana cloud token", "glc_", B64, 32, 512),
    Format("Grafana service account token", "glsa_", B62_, 32, 64),
    Format("Grafana API key", "eyJrIjoi", B64, 70, 400),
    Format("Readme API key", "rdme_", LOWER, 60, 80),
    # StreamingFast's (formerly dfuse's) web key: "web_" and 32 characters.
    Format("dfuse web key", "web_", LOWER, 32, 32),
    # Cloud
    Format("AWS access key id", "AKIA", UPPER, 16, 16),
    Format("AWS temporary access key id", "ASIA", UPPER, 16, 16),
    Format("AWS key id", "ABIA", UPPER, 16, 16),
    Format("AWS key id", "ACCA", UPPER, 16, 16),
    Format("AWS key id", "A3T", UPPER, 17, 17),
    Format("AWS Bedrock key", "ABSK", B64, 100, 256),
    Format("AWS Bedrock short-term key", "bedrock-api-key-", B64, 40, 4096),
    Format("Google API key", "AIza", URLSAFE, 35, 35),
    Format("Google OAuth client secret", "GOCSPX-", URLSAFE, 28, 28),
    Format("Google OAuth access token", "ya29.", URLSAFE, 30, 2048),
    Format("Google OAuth refresh token", "1//0", URLSAFE, 40, 512),
    Format("Azure AD client secret", "Q~", URLSAFE, 30, 40),
    Format("DigitalOcean token", "dop_v1_", HEX, 64, 64),
    Format("DigitalOcean OAuth token", "doo_v1_", HEX, 64, 64),
    Format("DigitalOcean refresh token", "dor_v1_", HEX, 64, 64),
    Format("Alibaba access key id", "LTAI", B62, 12, 28),
    Format("Tencent secret id", "AKID", B62, 32, 40),
    Format("IBM Cloud key", "ibmcloud_", URLSAFE, 32, 64),
    Format("Scaleway key", "SCW", UPPER, 17, 17),
    Format("Heroku key", "HRKU-", URLSAFE, 30, 80),
    Format("Fly.io token", "fo1_", URLSAFE, 40, 64),
    Format("Fly.io macaroon", "fm2_", B64, 100, 4096),
    Format("Fly.io macaroon", "fm1a_", B64, 100, 4096),
    Format("Fly.io macaroon", "fm1r_", B64, 100, 4096),
    Format("OpenShift user token", "sha256~", URLSAFE, 43, 64),
    Format("Defined Networking token", "dnkey-", URLSAFE, 79, 100),
    Format("Cast AI key", "castai_v1_", B62_, 73, 100),
    Format("ClickHouse Cloud secret", "4b1d", B62, 38, 38),
    Format("Akamai EdgeGrid token", "akab-", URLSAFE, 33, 64),
    Format("PlanetScale token", "pscale_tkn_", URLSAFE, 32, 64),
    Format("PlanetScale password", "pscale_pw_", URLSAFE, 32, 64),
    Format("PlanetScale OAuth token", "pscale_oauth_", URLSAFE, 32, 64),
    Format("Supabase token", "sbp_", B62, 40, 40),
    Format("Supabase secret key", "sb_secret_", URLSAFE, 20, 64),
    Format("Vercel token", "vcp_", B62, 24, 64),
    Format("Vercel integration token", "vci_", B62, 24, 64),
    Format("Vercel app token", "vca_", B62, 24, 64),
    Format("Vercel refresh token", "vcr_", B62, 24, 64),
    Format("Vercel key", "vck_", B62, 24, 64),
    Format("Netlify token", "nfp_", B62, 36, 40),
    Format("Cloudflare account token", "cfat_", B62, 40, 64),
    Format("Cloudflare user token", "cfut_", B62, 40, 64),
    Format("Cloudflare key", "cfk_", B62, 40, 64),
    Format("Cloudflare origin CA key", "v1.0-", ANY, 160, 200),
    Format("Render key", "rnd_", B62, 28, 40),
    Format("Railway token", "railway_", URLSAFE, 30, 64),
    Format("Databricks token", "dapi", URLSAFE, 32, 40),
    Format("Databricks OAuth secret", "dose", B62, 32, 64),
    Format("Snowflake PAT", "snowflake_pat_", URLSAFE, 30, 256),
    Format("Dynatrace token", "dt0c01.", ANY, 80, 100),
    Format("Dynatrace token", "dt0s01.", ANY, 80, 100),
    Format("New Relic user key", "NRAK-", UPPER, 27, 27),
    Format("New Relic insert key", "NRII-", URLSAFE, 32, 32),
    Format("New Relic browser key", "NRJS-", HEX, 19, 19),
    Format("New Relic ingest key", "NRRA-", HEX, 42, 42),
    Format("New Relic admin key", "NRAA-", HEX, 27, 27),
    Format("New Relic query key", "NRIQ-", URLSAFE, 32, 32),
    Format("Sentry user token", "sntryu_", HEX, 64, 64),
    Format("Sentry org token", "sntrys_", B64, 60, 512),
    Format("Datadog key", "ddapi_", B62, 30, 64),
    Format("PostHog personal key", "phx_", B62, 40, 64),
    Format("PostHog project key", "phc_", B62, 40, 64),
    Format("Frame.io token", "fio-u-", URLSAFE, 60, 80),
    Format("Nightfall key", "NF-", B62, 32, 32),
    Format("HubSpot private app token", "pat-na1-", ANY, 36, 36),
    Format("HubSpot private app token", "pat-eu1-", ANY, 36, 36),
    Format("PubNub publish key", "pub-c-", ANY, 36, 36),
    Format("PubNub subscribe key", "sub-c-", ANY, 36, 36),
    Format("PubNub secret key", "sec-c-", B62, 40, 60),
    Format("Fleetbase key", "flb_live_", B62, 20, 64),
    Format("MongoDB Atlas service account secret", "mdb_sa_sk_", URLSAFE, 30, 64),
    Format("MongoDB Atlas service account id", "mdb_sa_id_", B62, 20, 64),
    Format("Teamwork token", "tkn.v1_", B64, 40, 128),
    Format("Voiceflow key", "VF.DM.", ANY, 40, 80),
    Format("Voiceflow workspace key", "VF.WS.", ANY, 40, 80),
    Format("FullStory key", "na1.", B64, 60, 200),
    Format("Pinecone key", "pcsk_", URLSAFE, 40, 128),
    Format("Ubidots token", "BBFF-", B62, 30, 30),
    Format("Adafruit IO key", "aio_", B62, 28, 40),
    Format("SettleMint application token", "sm_aat_", B62, 16, 64),
    Format("SettleMint personal token", "sm_pat_", B62, 16, 64),
    Format("SettleMint service token", "sm_sat_", B62, 16, 64),
    Format("Adobe client secret", "p8e-", B62, 32, 48),
    Format("Authress access key", "authress_", ANY, 50, 200),
    Format("Authress access key", "scauth_", ANY, 50, 200),
    Format("Neon API key", "napi_", B62, 32, 128),
    Format("SaladCloud key", "salad_cloud_user_", B62, 40, 64),
    Format("Rootly key", "rootly_", HEX, 64, 64),
    Format("Confluent Cloud secret", "cflt", B64, 60, 60),
    Format("Zuplo key", "zpka_", B62_, 41, 41),
    # AI providers
    Format("Anthropic key", "sk-ant-", URLSAFE, 40, 256),
    Format("OpenAI project key", "sk-proj-", URLSAFE, 40, 256),
    Format("OpenAI service account key", "sk-svcacct-", URLSAFE, 40, 256),
    Format("OpenAI admin key", "sk-admin-", URLSAFE, 40, 256),
    Format("OpenRouter key", "sk-or-v1-", HEX, 64, 64),
    Format("Hugging Face token", "hf_", B62, 30, 40),
    Format("Hugging Face org token", "api_org_", B62, 30, 40),
    Format("Groq key", "gsk_", B62, 48, 64),
    Format("xAI key", "xai-", URLSAFE, 60, 100),
    Format("Replicate token", "r8_", B62, 30, 64),
    Format("Perplexity key", "pplx-", B62, 40, 64),
    Format("NVIDIA key", "nvapi-", URLSAFE, 60, 80),
    Format("LangSmith key", "lsv2_pt_", B62_, 40, 64),
    Format("LangSmith service key", "lsv2_sk_", B62_, 40, 64),
    Format("ElevenLabs key", "sk_", HEX, 48, 48),
    Format("Fireworks key", "fw_", B62, 24, 64),
    Format("Tavily key", "tvly-", URLSAFE, 32, 64),
    Format("Jina key", "jina_", B62, 60, 80),
    Format("Firecrawl key", "fc-", HEX, 32, 32),
    Format("Cerebras key", "csk-", B62, 48, 48),
    Format("Friendli key", "flp_", B62, 46, 46),
    Format("Together AI key", "tgp_v1_", URLSAFE, 43, 43),
    Format("Runway key", "key_", HEX, 128, 128),
    Format("Scale callback key", "live_auth_", HEX, 32, 32),
    Format("Langfuse secret key", "sk-lf-", URLSAFE, 36, 36),
    Format("Claude Code session URL", "claude.ai/code/session_", B62, 16, 64),
    # Payments and commerce
    Format("Stripe secret key", "sk_live_", B62, 10, 255),
    Format("Stripe test key", "sk_test_", B62, 20, 255),
    Format("Stripe restricted key", "rk_live_", B62, 10, 255),
    Format("Stripe restricted test key", "rk_test_", B62, 20, 255),
    Format("Stripe secret key", "sk_prod_", B62, 20, 255),
    Format("Stripe restricted key", "rk_prod_", B62, 20, 255),
    Format("Stripe webhook secret", "whsec_", B62, 24, 64),
    Format("Paystack key", "sk_live_", B62, 20, 255),
    Format("Square access token", "sq0atp-", URLSAFE, 22, 22),
    Format("Square OAuth secret", "sq0csp-", URLSAFE, 43, 43),
    # An application id, public in a payment page; kingfisher reports it as an API key, trufflehog pairs it with
    # the OAuth secret above.
    Format("Square application id", "sq0idp-", URLSAFE, 22, 22),
    Format("Square token", "EAAA", URLSAFE, 60, 60),
    Format("Paddle key", "pdl_live_apikey_", B62_, 53, 53),
    Format("Paddle sandbox key", "pdl_sdbx_apikey_", B62_, 53, 53),
    Format("Shopify access token", "shpat_", B62, 32, 40),
    Format("Shopify custom app token", "shpca_", B62, 32, 40),
    Format("Shopify private app token", "shppa_", B62, 32, 40),
    Format("Shopify shared secret", "shpss_", B62, 32, 40),
    Format("Shippo token", "shippo_live_", HEX, 40, 40),
    Format("Shippo test token", "shippo_test_", HEX, 40, 40),
    Format("Flutterwave secret", "FLWSECK-", URLSAFE, 32, 48),
    Format("Flutterwave test secret", "FLWSECK_TEST-", URLSAFE, 32, 48),
    Format("Flutterwave encryption key", "FLWSECK_TEST-", LOWER, 12, 12),
    Format("Adyen key", "AQE", ANY, 60, 512),
    # Midtrans' server keys (the `Mid-client-` key is public by design); ServiceNow calls its agents "MID Servers"
    Format("Midtrans server key", "Mid-server-", B62_, 20, 64),
    Format("Midtrans sandbox server key", "SB-Mid-server-", B62_, 20, 64),
    Format("GoCardless token", "live_", URLSAFE, 40, 40),
    Format("Pagar.me key", "ak_live_", B62, 30, 40),
    Format("Razorpay key", "rzp_live_", B62, 14, 14),
    Format("Coinbase key", "organizations/", ANY, 60, 200),
    Format("Plaid token", "access-production-", URLSAFE, 36, 36),
    Format("Plaid sandbox token", "access-sandbox-", URLSAFE, 36, 36),
    Format("Duffel token", "duffel_live_", URLSAFE, 43, 43),
    Format("Duffel test token", "duffel_test_", URLSAFE, 43, 43),
    Format("EasyPost key", "EZAK", B62, 54, 54),
    Format("EasyPost test key", "EZTK", B62, 54, 54),
    Format("Flexport key", "shltm_", URLSAFE, 40, 40),
    # Messaging and mail
    Format("Slack bot token", "xoxb-", URLSAFE, 20, 255),
    Format("Slack user token", "xoxp-", URLSAFE, 20, 255),
    Format("Slack app token", "xoxa-", URLSAFE, 20, 255),
    Format("Slack legacy token", "xoxo-", URLSAFE, 20, 255),
    Format("Slack refresh token", "xoxr-", URLSAFE, 20, 255),
    Format("Slack refresh token", "xoxe-", URLSAFE, 20, 255),
    Format("Slack config token", "xoxe.xox", URLSAFE, 20, 255),
    Format("Slack workspace token", "xoxs-", URLSAFE, 20, 255),
    Format("Slack app-level token", "xapp-", URLSAFE, 20, 255),
    Format("SendGrid key", "SG.", ANY, 60, 80),
    Format("Sendinblue key", "xkeysib-", URLSAFE, 60, 90),
    Format("Sendinblue SMTP key", "xsmtpsib-", URLSAFE, 60, 90),
    Format("Mailgun key", "key-", HEX, 32, 32),
    Format("Twilio key", "SK", HEX, 32, 32),
    Format("Twilio account SID", "AC", HEX, 32, 32),
    Format("Telnyx key", "KEY0", B62_, 50, 80),
    Format("Discord webhook", "discord.com/api/webhooks/", ANY, 60, 200),
    Format("Discord webhook", "discordapp.com/api/webhooks/", ANY, 60, 200),
    Format("Tines webhook", "tines.com/webhook/", ANY, 65, 66),
    Format("Linear key", "lin_api_", B62, 40, 40),
    Format("Linear OAuth token", "lin_oauth_", B62, 40, 64),
    Format("Notion token", "ntn_", B62, 40, 50),
    Format("Notion integration secret", "secret_", B62, 43, 43),
    Format("Figma token", "figd_", URLSAFE, 40, 64),
    Format("Figma OAuth token", "figu_", URLSAFE, 40, 64),
    Format("Asana token", "2/", ANY, 40, 80),
    Format("Typeform token", "tfp_", URLSAFE, 40, 64),
    Format("Mapbox secret token", "sk.eyJ", ANY, 60, 512),
    Format("Mapbox temporary token", "tk.eyJ", ANY, 60, 512),
    Format("Dropbox short-lived token", "sl.", URLSAFE, 130, 1400),
    Format("Postman key", "PMAK-", ANY, 59, 64),
    Format("Contentful token", "CFPAT-", URLSAFE, 43, 80),
    Format("Age secret key", "AGE-SECRET-KEY-1", UPPER, 58, 58),
    Format("Age recipient", "age1", LOWER, 58, 58),
    Format("Age plugin key", "AGE-PLUGIN-", UPPER, 20, 200),
    Format("1Password service token", "ops_eyJ", B64, 60, 4096),
    Format("1Password secret key", "A3-", ANY, 30, 40),
    Format("Yandex key", "AQVN", URLSAFE, 35, 38),
    Format("Yandex token", "y0_", URLSAFE, 50, 64),
    Format("Lob key", "live_", HEX, 35, 35),
    Format("Monday token", "eyJhbGciOiJIUzI1NiJ9.eyJ0aWQiOj", ANY, 60, 512),
    Format("Infracost key", "ico-", B62, 32, 32),
    Format("Intra42 secret", "s-s4t2ud-", HEX, 64, 64),
    Format("Intra42 secret", "s-s4t2af-", HEX, 64, 64),
    Format("Ionic token", "ion_", B62, 42, 42),
    Format("StackHawk key", "hawk.", ANY, 40, 60),
    Format("Apify token", "apify_api_", B62, 36, 36),
    Format("Zapier webhook", "hooks.zapier.com/hooks/catch/", ANY, 10, 80),
    Format("Riot Games API key", "RGAPI-", URLSAFE, 36, 36),
    Format("Slack webhook", "hooks.slack.com/", ANY, 30, 200),
    Format("Salesforce refresh token", "5Aep861", ANY, 40, 200),
    Format("Salesforce consumer key", "3MVG9", ANY, 80, 260),
    Format("Facebook page token", "EAAM", B62, 100, 512),
    Format("Facebook page token", "EAAC", B62, 100, 512),
    Format("Harness PAT", "pat.", ANY, 60, 100),
    Format("Harness service account token", "sat.", ANY, 60, 100),
    Format("Artifactory token", "cmVmdGtu", B64, 56, 128),
    Format("Azure Function key", "AzFu", B64, 40, 100),
    Format("Zoho OAuth token", "1000.", ANY, 65, 65),
)

_BY_PREFIX: dict[str, list[Format]] = {}
for _format in FORMATS:
    _BY_PREFIX.setdefault(_format.prefix, []).append(_format)
_PREFIX_LENGTHS = sorted({len(p) for p in _BY_PREFIX}, reverse=True)
# Prefixes that are everyday words or very short need a body that looks machine-made.
_WEAK_PREFIXES = frozenset({"1000.", "na1.", "live_", "key-", "SK", "AC", "s.", "2/", "fw_", "A3-", "API-", "sk_",
                            "pat.", "secret_", "dose", "dapi", "AQE", "Q~", "SCW", "EAAA", "EAAM", "EAAC",
                            "sat.", "cio", "aio_", "fc-", "4b1d", "A3T", "v1.0-", "ctp_", "cto_", "ctr_", "ddp_", "ddw_",
                            "hf_", "xoxb-", "xoxp-", "xoxa-", "xoxo-", "xoxr-", "xoxe-", "xoxe.xox", "xoxs-",
                            "key_", "live_auth_", "salad_cloud_user_", "napi_", "csk-", "flp_", "cflt", "Mid-server-",
                            "SB-Mid-server-", "web_"})

_MIN_TOKEN = min(len(f.prefix) + max(f.min_len, 1) for f in FORMATS)
_HEADS = frozenset(p[:2] for p in _BY_PREFIX)
_DISTINCT = {p: f for p, f in _BY_PREFIX.items() if len(p) >= 5 and p not in _WEAK_PREFIXES}
_DISTINCT_LENGTHS = sorted({len(p) for p in _DISTINCT}, reverse=True)
# Short prefixes whose whole token has a fixed structure: that structure, not the prefix, makes them
# distinctive enough to look for glued inside a run ("somSG.<22>.<43>" in a staged file), and for a prefix
# as common as Airtable's "pat" or ClickUp's "pk_" the only thing that tells a token from a word.
_STRUCTURED = {
    "SG.": re.compile(r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}"),
    "pat": re.compile(r"pat[A-Za-z0-9]{14}\.[A-Za-z0-9]{64}(?![A-Za-z0-9])"),
    # ClickUp's personal token; Klaviyo's private key.
    "pk_": re.compile(r"pk_(?:[0-9]{7,8}_[0-9A-Z]{32}|[A-Za-z0-9]{34}(?!_))(?![A-Za-z0-9])"),
    # Resend's key.
    "re_": re.compile(r"re_[1-9A-HJ-NP-Za-km-z]{8}_[1-9A-HJ-NP-Za-km-z]{24}(?![A-Za-z0-9_])"),
    # Voyage AI's key: "pa-" also opens names ("pa-frontend-release-…"), so its body must hold capitals,
    # small letters and digits.
    "pa-": re.compile(r"pa-(?=[A-Za-z0-9_-]{0,42}[A-Z])(?=[A-Za-z0-9_-]{0,42}[a-z])(?=[A-Za-z0-9_-]{0,42}[0-9])"
                      r"[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])"),
    # Dynatrace, any kind and version of token ("dt0c01", "dt0s16"…).
    "dt0": re.compile(r"dt0[a-z][0-9]{2}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}(?![A-Za-z0-9])"),
    # Tailscale: the key's kind ("auth", "api", "client", "secret"…), its id and the secret. Example keys are
    # short ("tskey-api-<7>-<9>"), and "tskey-" with three dashed parts is nothing else.
    "tsk": re.compile(r"tskey-[a-z]{3,10}-[A-Za-z0-9_]{4,64}-[A-Za-z0-9_]{4,128}(?![A-Za-z0-9_-])"),
}
# Formats with no prefix but a shape of their own, tried on a run no prefix claimed: Mailchimp's key is 32 hex
# digits and its datacenter ("-us12"); a Discord bot token is the bot's id in base64 (digits among it), a
# timestamp and an HMAC; an Azure AD client secret has "Q~" after its fourth character. Microsoft's identifiable
# keys carry a service's signature at a fixed offset ("+ASt" for Storage, "AzSe" for Search, "JQQJ9" in the
# common format), an Azure DevOps token "AZDO"; a MaxMind license key ends in "_mmk"; a Terraform Cloud or
# Vagrant Cloud token is its 14-character id before "atlasv1" (which alone would only find its second half).
_SHAPED = (
    re.compile(r"[0-9a-f]{32}-us[0-9]{1,2}(?![A-Za-z0-9])"),
    re.compile(r"[MNO][A-Za-z0-9]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}(?![A-Za-z0-9_-])"),
    re.compile(r"[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])"),
    # Service Bus, Event Hub, Relay, IoT, Cache for Redis, Event Grid.
    re.compile(r"[A-Za-z0-9+/]{33}(?:\+ASb|\+AEh|\+ARm|AIoT|AzCa|AZEG)[A-P][A-Za-z0-9+/]{5}=(?![A-Za-z0-9+/=_-])"),
    # Storage, Cosmos DB, Batch, ML web services, API Management.
    re.compile(r"[A-Za-z0-9+/]{76}(?:\+ASt|ACDb|\+ABa|\+AMC|APIM)[A-Za-z0-9+/]{5}[AQgw]==(?![A-Za-z0-9+/=_-])"),
    re.compile(r"[A-Za-z0-9_-]{44}AzFu[A-Za-z0-9_-]{5}[AQgw]==(?![A-Za-z0-9+/=_-])"),
    re.compile(r"[A-Za-z0-9]{42}AzSe[A-D][A-Za-z0-9]{5}(?![A-Za-z0-9+/=_-])"),
    re.compile(r"[A-Za-z0-9+/]{42}\+ACR[A-D][A-Za-z0-9+/]{5}(?![A-Za-z0-9+/=_-])"),
    re.compile(r"[A-Za-z0-9]{75,76}AZDO[A-Za-z0-9]{4,5}(?![A-Za-z0-9])"),
    # Microsoft's common annotated key (Azure AI services among others): "JQQJ9" after 52 characters.
    re.compile(r"[A-Za-z0-9]{52}JQQJ9[9DH][A-Za-z0-9][A-L][A-Za-z0-9]{16}[A-Za-z][A-Za-z0-9]{7}(?:[A-Za-z0-9]{2}==)?"
               r"(?![A-Za-z0-9+/=_-])"),
    re.compile(r"[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk(?![A-Za-z0-9_])"),
    # Mercado Pago's access token: "APP_USR-" (or "TEST-" in the sandbox), the application's number, a date
    # stamp, 32 hexadecimal digits and the user's id.
    re.compile(r"(?:APP_USR|TEST)-[0-9]{16}-[0-9]{6}-[0-9a-f]{32}-[0-9]{6,12}(?![A-Za-z0-9_-])"),
    # Ticket Tailor's key: "sk_", the box office's number and id, and 32 hexadecimal digits.
    re.compile(r"sk_[0-9]{4}_[0-9]{6}_[0-9a-f]{32,40}(?![A-Za-z0-9_])"),
    re.compile(r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70}(?![A-Za-z0-9_=-])"),
    # An Azure Bot Service (Web Chat, Direct Line) secret: 11 characters, a dot and 43.
    re.compile(r"[A-Za-z0-9_-]{11}\.[A-Za-z0-9_-]{43}(?![A-Za-z0-9_.-])"),
)
# Tokens holding a character that ends a run: "!" between a Salesforce org id and the session id, "=" before an
# Atlassian token's checksum, "@" in the path of a Microsoft Teams webhook (the GUID-shaped parts are matched
# loosely: tickets write them with other letters too); and a ThingsBoard device token, a segment of its URL whose
# host and path are worth keeping. Looked for in the whole text; each pattern opens with a literal, so the scan
# is linear. A Teams webhook's whole URL is the secret, as Slack's is: its host and scheme go with it (`url`).
# Since 2024 the URL ends in one more segment, a signature opening with "V2".
_TEAMS_PATH = (r"[0-9A-Za-z-]{36}@[0-9A-Za-z-]{36}/IncomingWebhook/[0-9A-Za-z]{32}/[0-9A-Za-z-]{36}"
               r"(?:/V2[A-Za-z0-9_-]{20,100}+)?")
_ACROSS_RUNS = (
    re.compile(r"(?P<token>00D(?<![A-Za-z0-9]00D)[A-Za-z0-9]{12,15}![A-Za-z0-9_.]{90,256})"),
    re.compile(r"(?P<url>webhook\.office\.com/webhookb2|outlook\.office\.com/webhook)/(?P<token>" + _TEAMS_PATH + ")"),
    re.compile(r"thingsboard\.(?:cloud|io)/api/v1/(?P<token>[A-Za-z0-9]{20})(?![A-Za-z0-9_-])"),
    # Braintree's access token: "$" joins the environment, the merchant's id and 32 hexadecimal digits.
    re.compile(r"(?P<token>access_token\$(?:production|sandbox)\$[0-9a-z]{16}\$[0-9a-f]{32})(?![0-9a-f])"),
    # Chat bots' webhooks in China: Feishu's and Lark's hook id, DingTalk's access token, WeCom's key.
    re.compile(r"(?P<url>open\.(?:feishu\.cn|larksuite\.com))/open-apis/bot/v2/hook/(?P<token>[0-9a-f-]{32,36})(?![\w-])"),
    re.compile(r"(?P<url>oapi\.dingtalk\.com)/robot/send\?access_token=(?P<token>[0-9a-f]{64})(?![0-9a-f])"),
    re.compile(r"(?P<url>qyapi\.weixin\.qq\.com)/cgi-bin/webhook/send\?key=(?P<token>[0-9a-f-]{36})(?![\w-])"),
    # Defined Networking's token: 26 and 52 characters of [a-z0-9=_-], whose "=" would end a run.
    re.compile(r"(?P<token>dnkey-(?<![A-Za-z0-9]dnkey-)[a-z0-9=_-]{26}-[a-z0-9=_-]{52})(?![a-z0-9=_-])"),
    # Atlassian's API token ends in "=" and an 8-digit checksum, which would end a run before it.
    re.compile(r"(?P<token>ATATT3(?<![A-Za-z0-9]ATATT3)[A-Za-z0-9_=-]{60,512}+)"),
    # Web3 gateways take the project's key in the path: the URL is the credential.
    re.compile(r"(?P<url>infura\.io)/(?P<token>(?:ws/)?v3/(?P<key>[0-9a-f]{32}))(?![0-9a-f])"),
    re.compile(r"(?P<url>alchemyapi\.io|alchemy\.com)/(?P<token>(?:nft/)?v[23]/(?P<key>[A-Za-z0-9_-]{32}))"
               r"(?![A-Za-z0-9_-])"),
    # OpenWeatherMap's key is the `appid` of its query.
    re.compile(r"[?&](?i:appid)=(?P<token>(?P<key>[0-9a-f]{32}))(?![0-9a-f])"),
    # A Firebase Cloud Messaging registration token: the instance id, ":" and "APA91b…".
    re.compile(r"(?P<token>[A-Za-z0-9_-]{11}:APA91b[A-Za-z0-9_-]{100,300}+)"),
)


def _shaped_at_start(value: str) -> int:
    for pattern in _SHAPED:
        found = pattern.match(value)
        if found is None:
            continue
        # Dotted identifiers take these shapes too ("NotificationDispatcherImpl.handle.process…"): a token is
        # random, or a fixture's alphabet ("sk_5678_234567_abcdefabcdef…").
        token = found.group()
        if _random_enough(token) and (alphabet_typed(token) or not pronounceable(token, capitals=False)):
            return found.end()
    return 0


# Where a glued token may start inside a run: after "_" or ".", a letter after a digit, a capital after a small letter.
_INNER_START = re.compile(r"[_.0-9][A-Za-z]|[a-z][A-Z]")

# Token runs: letters, digits and the joiners tokens use. ":" is left out so that a URL is cut into its
# parts; a run must not start right after a token character (the look-behind is after the first
# character so the engine can skip ahead), and only runs as long as the shortest token are read, so
# words and numbers never count against the budget.
_LONG_RUN = re.compile(
    r"[A-Za-z0-9_.+~-](?<![A-Za-z0-9_.+~-].)(?=[A-Za-z0-9_.+~/-]{%d})[A-Za-z0-9_.+~-]*+(?:/[A-Za-z0-9_.+~-]++)*+=*+"
    % (_MIN_TOKEN - 1)
)


def _random_enough(body: str) -> bool:
    """A machine-made body: letters and digits both, or (for a long body) many case changes that are not
    those of camelCase words ("makeKubeConfigController")."""
    body = body[:PROBE]
    letters = sum(c.isalpha() for c in body)
    digits = sum(c.isdigit() for c in body)
    if letters and digits >= 2:
        return True
    changes = sum(a.isupper() != b.isupper() for a, b in zip(body, body[1:], strict=False) if a.isalpha() and b.isalpha())
    if len(body) < 20 or changes < len(body) // 4:
        return False
    # camelCase has no two capitals in a row, and its pieces are words; a random body has both kinds of run.
    return _TWO_CAPITALS.search(body) is not None or not pronounceable(body, capitals=False)


_TWO_CAPITALS = re.compile(r"[A-Z]{2}")


_MADE_UP = re.compile(r"dummy|notareal|not_a_real|xxxx")


def is_placeholder_body(body: str) -> bool:
    """`xxxx…`, `****`, one character repeated, or "Fake…": documentation, not a token."""
    chars = {c for c in body if c.isalnum()}
    return len(chars) <= 1 or chars <= {"x", "X"} or _MADE_UP.search(body.lower()) is not None or says_fake(body)


def _match(run: str, fmt: Format) -> int:
    """Length of the token at the start of `run` in format `fmt`, or 0."""
    body_start = len(fmt.prefix)
    found = _ALPHABETS[fmt.alphabet].match(run, body_start)
    if found is None:
        return 0
    length = found.end() - body_start
    if length < fmt.min_len:
        return 0
    if length > fmt.max_len:
        # A longer run of the same alphabet is another kind of string, unless only joiners follow.
        return 0
    end = found.end()
    body = run[body_start:end]
    if is_placeholder_body(body):
        return 0
    if fmt.prefix in _WEAK_PREFIXES and not _random_enough(body):
        return 0
    return end


def _token_at(value: str, start: int, table: dict[str, list[Format]], lengths: list[int]) -> int:
    """End of a vendor token starting at `value[start]`, or 0."""
    if value[start:start + 2] not in _HEADS:
        return 0  # most runs: no prefix starts with these two characters
    for length in lengths:
        if start + length >= len(value):
            continue
        formats = table.get(value[start:start + length])
        if not formats:
            continue
        end = max(_match(value[start:], fmt) for fmt in formats)
        if end:
            # The token may be followed by sentence punctuation that the run took in.
            while end > length and value[start + end - 1] in ".-_~+":
                end -= 1
            return start + end
    return 0


def _structured_at(value: str, start: int) -> int:
    pattern = _STRUCTURED.get(value[start:start + 3])
    found = pattern.match(value, start) if pattern else None
    # An identifier can take a structure made of words ("re_register_…", "pk_<34 letters>"); a token is random.
    return found.end() if found and _random_enough(found.group()) else 0


# What opens a URL before its host's last labels: the scheme and the labels the pattern did not name.
_URL_HEAD = re.compile(r"(?:[a-z][a-z0-9+.-]{0,15}://)?(?:[A-Za-z0-9_-]{1,63}\.){0,4}$")


def _url_start(text: str, position: int, reach: int) -> int:
    """Where the URL whose host ends at `position` starts, scheme included (at most `reach` characters back)."""
    head = _URL_HEAD.search(text, max(0, position - reach), position)
    return head.start() if head else position


def _with_scheme(text: str, start: int, token: str) -> int:
    """Where a token that is a URL from its host on (`discord.com/api/webhooks/…`) starts with its scheme: the
    whole URL is the secret, as scanners label it."""
    host = token.split("/", 1)[0]
    return _url_start(text, start, 20) if "/" in token and "." in host else start


def _across_runs(text: str) -> Iterator[Range]:
    for pattern in _ACROSS_RUNS:
        for found in capped(pattern.finditer(text)):
            start, end = found.span("token")
            if "key" in pattern.groupindex and is_placeholder_body(found.group("key")):
                continue  # `https://mainnet.infura.io/v3/000…000`
            if "url" in pattern.groupindex:
                start = _url_start(text, found.start(), 80)
            while text[end - 1] == ".":  # the sentence's full stop
                end -= 1
            yield start, end


# A hostile run ("a_a_a_…") has an inner start every other character; a set lookup of its first two
# characters is what most of them cost, instead of a dictionary lookup per prefix length.
_INNER_HEADS = frozenset(prefix[:2] for prefix in (*_DISTINCT, *_STRUCTURED))


# A file named by its hash (`web_5d41…592.min.js`, `….chunk.js.gz`, `….tar.gz`): a file, however token-shaped its name.
_FILE_SUFFIX = re.compile(r"(?:\.[a-z0-9]{1,8}){0,3}\.(?:js|mjs|cjs|css|map|html?|json|png|jpe?g|gif|svg|webp|ico|"
                          r"woff2?|ttf|wasm|txt|log|zip|tar|tgz|gz|br|jar|pdf|csv)")


def find_vendor_tokens(text: str) -> Iterator[Range]:
    yield from _across_runs(text)
    for run in capped(_LONG_RUN.finditer(text)):
        value = run.group()
        end = _token_at(value, 0, _BY_PREFIX, _PREFIX_LENGTHS) or _structured_at(value, 0) or _shaped_at_start(value)
        if end:
            if not _FILE_SUFFIX.fullmatch(value, end):
                yield _with_scheme(text, run.start(), value[:end]), run.start() + end
            continue
        # Glued to a name ("MY_tskey-…", "0tskey-…"): only distinctive prefixes are looked for inside a run.
        for inner in capped(_INNER_START.finditer(value), MAX_INNER_STARTS):
            position = inner.start() + 1
            if value[position:position + 2] not in _INNER_HEADS:
                continue
            end = _token_at(value, position, _DISTINCT, _DISTINCT_LENGTHS) or _structured_at(value, position)
            if end:
                yield run.start() + inner.start() + 1, run.start() + end
                break
