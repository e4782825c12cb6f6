"""Hostile units of the forms the credential finders learned last, each a pattern of its own: a field of 100 KiB
made of one of them must stay cheap. Shared by `tests/test_guardrail_linear.py` and `bench/bench_guardrail_linear.py`."""

FORM_UNITS = [
    "password for a b c d e f g h i j k l ", "password I set is ", "hasło do a b to ", "비밀번호는 ", "use Ab!1xyzw9 to log in ",
    "PIN is 1234 ", "\"u:p@tcp(", "define('DB_PASSWORD', '", "primary key ", "ENC[", "echo a:Ab!1xyzw9 | chpasswd\n",
    "user=a password=a ", "arn:aws:kms:a:1:key/", "access_token$production$",
    "username a privilege 1 password 0 ", "lftp -u a,", "net user a ", "cmdkey /pass:", "security add-generic-password -w ",
    " +login a ", "sqlplus a/", "GRANT x TO a IDENTIFIED BY '", "CREATE ROLE a PASSWORD '", "-U a -P ", "pw = b&",
    '.option("password", "', "senha nova: ", "كلمة مرور ",
    "hasło do a (b: c) to ", "пароль a (b) — ", "密码已经改成 ", "MINIO_USER: a\nMINIO_PASSWORD: ", "--ask-vault-pass ",
    '"n":"', "payment_intent: pi_", "msg = \"{a} ", "비밀번호를 ab!cd1234 ", "パスワードを",
    "password was reset to ", "a!b2c3d4e5 is the new password ", "κωδικός είναι ", "הסיסמה היא ",
    "Authorization: Scheme ", "BUNDLE_A__COM=a:", "a1b2c3d4e5f:APA91b", "infura.io/v3/", "https://a.",
    "password_couchbase: ", "${a.b}", "'+a+'", "a&b*c(d-e=f+g)", "12345678:AA", "apikey:=a&b<c>",
    "passwords:\n  - Ab!1xyzw9\n", '"Ab!1xyzw9" == password ', 'password = f"{a}', "boundary=Ab1Cd2Ef3Gh4Ij5Kl6Mn7 --",
    "none,zlib-1@openssh.com,",
]
