"""story.solution-leakage: the want names a UI widget or a technology instead of the user's need."""

from __future__ import annotations

from reqgate.pipeline.rules.document import Document, words
from reqgate.pipeline.schemas import Finding

CHECK_ID = "story.solution-leakage"

_UI = words(
    r"(?:double[- ]?|right[- ]?)?click(?:s|ed|ing)?", r"tap(?:s|ped|ping)? on", r"buttons?",
    r"drop[- ]?downs?",
    r"check[- ]?box(?:es)?", r"radio buttons?", r"toggles?", r"sliders?", r"text ?(?:box|field|area)s?",
    r"input (?:box|field)s?", r"combo ?box(?:es)?", r"pop[- ]?ups?", r"modals?", r"dialog(?:ue)?(?: box)?s?",
    r"tool ?tips?", r"side ?bars?", r"nav(?:igation)? ?bars?", r"hamburger(?: menu)?", r"menus?", r"icons?",
    r"widgets?", r"screens?", r"(?:web ?|landing |home ?|detail |settings )?pages?", r"tabs?", r"banners?",
    r"carousels?", r"spinners?", r"scroll ?bars?", r"swipe", r"drag(?:ging)?", r"hyperlinks?", r"iframes?",
    r"forms?", r"fonts?", r"css", r"html", r"(?:user |graphical )?interfaces?", r"ui", r"gui", r"dashboards?",
)
_TECH = words(
    r"databases?", r"db", r"sql", r"nosql", r"my ?sql", r"postgres(?:ql)?", r"mongo(?:db)?", r"redis",
    r"elastic ?search", r"kafka", r"rabbitmq", r"s3", r"aws", r"azure", r"gcp", r"lambdas?", r"docker",
    r"kubernetes", r"k8s", r"apis?", r"rest(?:ful)?(?: api)?", r"graphql", r"end ?points?", r"web ?hooks?",
    r"json", r"xml", r"yaml", r"microservices?", r"servers?", r"back[- ]?end", r"front[- ]?end",
    r"(?-i:React|Angular|Vue|Rails|Spring|Flask)", r"vue\.js", r"jquery", r"django", r"node\.js",
    r"javascript", r"typescript", r"python", r"java", r"php", r"c\+\+", r"c#", r"\.net", r"cron(?: ?jobs?)?",
    r"caches?", r"caching", r"sql quer(?:y|ies)", r"stored procedures?", r"database tables?", r"schemas?",
    r"cookies?", r"ajax", r"web ?sockets?", r"plugins?", r"scripts?", r"ldap", r"oauth", r"jwt", r"ssl",
    r"tls",
    r"blockchain", r"iot", r"gis", r"gps", r"sensors?",
    # Machine-learning technique names prescribe how, not what; "AI" alone names the product category.
    r"machine learning", r"ml", r"deep learning", r"(?:artificial )?neural networks?", r"cnns?", r"rnns?",
    r"lstms?", r"svms?", r"support vector(?: machines?| regression)?", r"random forests?", r"decision trees?",
    r"(?:logistic |linear )?regression(?: models?)?", r"xgboost", r"k-?means", r"k-?medoids", r"clustering",
    r"gans?", r"transformers?", r"bert", r"gpt", r"llms?", r"pca", r"principal component analysis",
    r"gaussian mixture models?", r"gmms?", r"fuzzy", r"algorithms?",
    r"(?:ml |ai |predictive |prediction )?models?",
    r"framework", r"(?:un)?supervised learning", r"incremental learning", r"transfer learning",
    r"data mining", r"digital twin", r"computer vision", r"nlp",
    r"natural language processing", r"wavelets?", r"imputation",
    prefix=True,
)
# The want states the work of building it ("develop", "integrate") rather than the need it serves.
_BUILD = words(r"develop(?:s|ed|ing)?", r"design(?:s|ed|ing)?", r"implement(?:s|ed|ing)?", r"build(?:s|ing)?",
               r"built", r"architect", r"code", r"program", r"deploy(?:s|ed|ing)?", r"engineer",
               r"integrat(?:e|es|ed|ing|ion)", r"apply(?:ing)?", r"refactor(?:s|ed|ing)?", r"migrate")
_SUGGESTION = ("Describe what the user needs to achieve, not how it is built; leave the {kind} choice to the "
               "team or move it to a technical note.")

_BUILD_SUGGESTION = "Say what the user can do once it exists, and leave how to build it to the team."


def find(doc: Document) -> list[Finding]:
    story = doc.story
    if not doc.story_like or story is None or story.want is None:
        return []
    want = story.want
    return [
        *doc.scan(CHECK_ID, _UI, want.start, want.end, "'{quote}' is interface design, not a need",
                  _SUGGESTION.format(kind="interface")),
        *doc.scan(CHECK_ID, _TECH, want.start, want.end, "'{quote}' names a technology, not a need",
                  _SUGGESTION.format(kind="technology")),
        *doc.scan(CHECK_ID, _BUILD, want.start, want.end,
                  "'{quote}' describes building the solution, not the need", _BUILD_SUGGESTION),
    ]
