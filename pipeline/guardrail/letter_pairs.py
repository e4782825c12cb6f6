"""The 250 letter pairs most frequent in the words (three letters or more) of CPython 3.11's standard library
sources: identifiers, comments and docstrings, code-flavoured English under the PSF licence. They make 96.5% of
the pairs there, and nearly every pair of a word or identifier people write ("exception", "cgroups",
"kubectl"); a piece of a key made mostly of other pairs ("abcd", "ijkl", "Dfulghxvvm") was typed by no one.

Derived once by counting, for every `[A-Za-z]{3,}` run of `Lib/*.py` (lower-cased, weighted by occurrences),
its adjacent letter pairs and keeping the 250 most frequent.
"""

COMMON_PAIRS = frozenset("""
    ab ac ad ag ai ak al am an ap ar as at au av ax ay ba be bi bj bl bo br bs bu by ca ce ch ci ck cl co cr
    ct cu da dd de di dl do dr ds du ea ec ed ee ef eg el em en eo ep eq er es et ev ew ex ey fa fe ff fi fl
    fo fr fs ft fu ge gi gl gn gr gs gu ha he hi ho hr ht ia ib ic id ie if ig il im in io ip ir is it iv ix
    iz je ke ki ks la ld le lf li ll lo ls lt lu ly ma mb me mi mm mo mp ms mu na nc nd ne nf ng ni nk nl nn
    no np ns nt nu nv oa ob oc od of og oi ok ol om on oo op or os ot ou ov ow pa pe pi pl po pp pr pt pu py
    qu ra rc rd re rg ri rk rm rn ro rr rs rt ru ry sa sc se sh si sl so sp ss st su sy ta tc td te tf th ti
    tl tm to tp tr ts tt tu ty ub uc ue uf ui ul um un up ur us ut va ve vi wa we wh wi wo wr xc xi xp xt ye
    yp ys yt ze zi
""".split())
