"""Hostile HTML corpus for the safe-content builders and renderer.

Each case is `Case(id, category, html)`. Every payload tries to make a
browser do something observable and harmless: fetch
`http://127.0.0.1:9/<case-id>` (port 9 is "discard"; nothing answers), call
`alert('<case-id>')`, or set `window.__pwned = '<case-id>'`. A browser test
(e2e, written separately) loads the rendered output of every case and fails
on any request to 127.0.0.1:9, any dialog, or `window.__pwned` being set.

Ids are stable: tests and the browser test refer to them. Add new cases at
the end of a category; never renumber or reuse an id.
"""

from __future__ import annotations

import base64
import re
from typing import NamedTuple


class Case(NamedTuple):
    id: str
    category: str
    html: str


# "$ID" in a template is replaced by the case id.
FETCH = "fetch('http://127.0.0.1:9/$ID')"
URL = "http://127.0.0.1:9/$ID"
ALERT = "alert('$ID')"
PWN = "window.__pwned='$ID'"


def _b64(text: str) -> str:
    """Mark `text` for base64 encoding once its "$ID" has been filled in."""
    return f"[[b64:{text}]]"


_B64_MARK = re.compile(r"\[\[b64:(.*?)\]\]", re.S)


def _expand(template: str, case_id: str) -> str:
    html = template.replace("$ID", case_id)
    return _B64_MARK.sub(lambda m: base64.b64encode(m.group(1).encode()).decode(), html)


_RAW: list[tuple[str, str, str]] = [
    # -- script elements --------------------------------------------------
    ("script-basic", "script", f"<script>{FETCH}</script>"),
    ("script-src", "script", f'<script src="{URL}"></script>'),
    ("script-upper", "script", f"<SCRIPT>{ALERT}</SCRIPT>"),
    ("script-type", "script", f'<script type="text/javascript">{PWN}</script>'),
    ("script-double-lt", "script", f"<<script>{ALERT};//<</script>"),
    ("script-unclosed", "script", f"<p>hi</p><script>{ALERT}"),
    ("script-split", "script", f"<scr<script>ipt>{ALERT}</scr</script>ipt>"),
    ("script-in-p", "script", f"<p>hello<script>{PWN}</script> world</p>"),
    ("script-slash-src", "script", f'<script/src="{URL}"></script>'),
    ("script-module", "script", f"<script type=module>import('{URL}')</script>"),
    ("script-data-src", "script", f'<script src="data:text/javascript,{ALERT}"></script>'),
    ("script-escaped-text", "script", f"&lt;script&gt;{ALERT}&lt;/script&gt;"),
    ("script-in-a", "script", f'<a href="https://ok.example/"><script>{ALERT}</script>ok</a>'),
    # -- event handler attributes ----------------------------------------
    ("on-img-onerror", "event-handler", f'<img src=x onerror="{ALERT}">'),
    ("on-img-remote-onerror", "event-handler", f'<img src="{URL}-img" onerror="{FETCH}">'),
    ("on-body-onload", "event-handler", f'<body onload="{ALERT}">text</body>'),
    ("on-svg-onload", "event-handler", f'<svg onload="{ALERT}"></svg>'),
    ("on-svg-slash-onload", "event-handler", f"<svg/onload={ALERT}>"),
    ("on-div-onmouseover", "event-handler", f'<div onmouseover="{ALERT}">hover me</div>'),
    (
        "on-a-onclick-ok-href",
        "event-handler",
        f'<a href="https://ok.example/" onclick="{ALERT}">ok</a>',
    ),
    ("on-p-upper", "event-handler", f'<p ONCLICK="{ALERT}">click</p>'),
    ("on-input-autofocus", "event-handler", f'<input autofocus onfocus="{ALERT}">'),
    (
        "on-details-ontoggle",
        "event-handler",
        f'<details open ontoggle="{ALERT}"><summary>s</summary>x</details>',
    ),
    ("on-video-source", "event-handler", f'<video><source onerror="{ALERT}"></video>'),
    ("on-audio-onerror", "event-handler", f"<audio src=x onerror={ALERT}>"),
    ("on-marquee-onstart", "event-handler", f'<marquee onstart="{ALERT}">m</marquee>'),
    ("on-iframe-onload", "event-handler", f'<iframe onload="{ALERT}"></iframe>'),
    ("on-span-pointerenter", "event-handler", f'<span onpointerenter="{PWN}">x</span>'),
    ("on-img-backtick", "event-handler", f"<img src=x onerror=`{ALERT}`>"),
    ("on-img-slashes", "event-handler", f"<img/src=x/onerror={ALERT}>"),
    ("on-style-onload", "event-handler", f'<style onload="{ALERT}"></style>'),
    (
        "on-svg-animate-onbegin",
        "event-handler",
        f'<svg><animate onbegin="{ALERT}" attributeName=x dur=1s></svg>',
    ),
    ("on-entity-handler", "event-handler", "<img src=x onerror=\"&#97;lert('$ID')\">"),
    ("on-image-tag", "event-handler", f"<image src=x onerror={ALERT}>"),
    (
        "on-select-onfocus",
        "event-handler",
        f"<select autofocus onfocus={ALERT}><option>x</option></select>",
    ),
    ("on-strong-onclick", "event-handler", f'<strong onclick="{ALERT}">bold</strong>'),
    (
        "on-span-ellipsis-onclick",
        "event-handler",
        f'<span class="ellipsis" onclick="{ALERT}">x</span>',
    ),
    # -- script-capable URLs ---------------------------------------------
    ("url-js", "js-url", f'<a href="javascript:{ALERT}">x</a>'),
    ("url-js-mixed-case", "js-url", f'<a href="JaVaScRiPt:{ALERT}">x</a>'),
    ("url-js-leading-space", "js-url", f'<a href="  javascript:{ALERT}">x</a>'),
    ("url-js-dec-entity", "js-url", "<a href=\"&#106;avascript:alert('$ID')\">x</a>"),
    ("url-js-dec-entity-nosemi", "js-url", "<a href=\"&#106avascript:alert('$ID')\">x</a>"),
    ("url-js-hex-entity", "js-url", "<a href=\"&#x6A;avascript:alert('$ID')\">x</a>"),
    ("url-js-hex-padded", "js-url", "<a href=\"&#x0000006A;avascript:alert('$ID')\">x</a>"),
    ("url-js-hex-nosemi", "js-url", "<a href=\"&#x6A&#x61&#x76&#x61script:alert('$ID')\">x</a>"),
    (
        "url-js-all-entities",
        "js-url",
        '<a href="' + "".join(f"&#{ord(c)};" for c in "javascript:") + "alert('$ID')\">x</a>",
    ),
    ("url-js-colon-entity", "js-url", "<a href=\"javascript&colon;alert('$ID')\">x</a>"),
    ("url-js-colon-dec", "js-url", "<a href=\"javascript&#58;alert('$ID')\">x</a>"),
    ("url-js-colon-hex", "js-url", "<a href=\"javascript&#x3A;alert('$ID')\">x</a>"),
    ("url-js-tab-entity", "js-url", "<a href=\"java&Tab;script:alert('$ID')\">x</a>"),
    ("url-js-newline-entity", "js-url", "<a href=\"java&NewLine;script:alert('$ID')\">x</a>"),
    ("url-js-tab-hex", "js-url", "<a href=\"jav&#x09;ascript:alert('$ID')\">x</a>"),
    ("url-js-literal-tab", "js-url", f'<a href="java\tscript:{ALERT}">x</a>'),
    ("url-js-literal-newline", "js-url", f'<a href="java\nscript:{ALERT}">x</a>'),
    ("url-js-literal-cr", "js-url", f'<a href="java\rscript:{ALERT}">x</a>'),
    ("url-js-nul", "js-url", f'<a href="java\x00script:{ALERT}">x</a>'),
    ("url-js-control-prefix", "js-url", f'<a href="\x01\x02javascript:{ALERT}">x</a>'),
    ("url-js-control-entity-prefix", "js-url", "<a href=\"&#1;javascript:alert('$ID')\">x</a>"),
    ("url-js-mixed-entities", "js-url", "<a href=\"&#X6a;AvAsCrIpT&#58;alert('$ID')\">x</a>"),
    ("url-js-percent-body", "js-url", "<a href=\"javascript:%61lert('$ID')\">x</a>"),
    ("url-js-comment-newline", "js-url", "<a href=\"javascript://%0aalert('$ID')\">x</a>"),
    ("url-vbscript", "js-url", '<a href="vbscript:msgbox(&quot;$ID&quot;)">x</a>'),
    ("url-livescript", "js-url", f'<a href="livescript:{ALERT}">x</a>'),
    ("url-data-html", "js-url", f'<a href="data:text/html,<script>{ALERT}</script>">x</a>'),
    (
        "url-data-base64",
        "js-url",
        '<a href="data:text/html;base64,' + _b64(f"<script>{ALERT}</script>") + '">x</a>',
    ),
    ("url-data-svg", "js-url", f'<a href="data:image/svg+xml,<svg onload={ALERT}>">x</a>'),
    ("url-data-upper", "js-url", f'<a href="DATA:text/html,<script>{ALERT}</script>">x</a>'),
    ("url-file", "js-url", '<a href="file:///etc/passwd#$ID">x</a>'),
    ("url-feed-js", "js-url", f'<a href="feed:javascript:{ALERT}">x</a>'),
    (
        "url-area-js",
        "js-url",
        f'<map name=m><area shape=rect coords=0,0,9,9 href="javascript:{ALERT}"></map>',
    ),
    ("url-img-src-js", "js-url", f'<img src="javascript:{ALERT}">'),
    (
        "url-img-src-data",
        "js-url",
        '<img src="data:image/svg+xml;base64,'
        + _b64(f"<svg xmlns='http://www.w3.org/2000/svg' onload=\"{ALERT}\"/>")
        + '">',
    ),
    ("url-js-nbsp-prefix", "js-url", "<a href=\"&nbsp;javascript:alert('$ID')\">x</a>"),
    ("url-js-soft-hyphen", "js-url", "<a href=\"java&shy;script:alert('$ID')\">x</a>"),
    ("url-https-no-slashes", "js-url", '<a href="https:127.0.0.1:9/$ID">x</a>'),
    # -- protocol-relative and path tricks --------------------------------
    ("rel-protocol-relative", "protocol-relative", '<a href="//127.0.0.1:9/$ID">x</a>'),
    ("rel-img-protocol-relative", "protocol-relative", '<img src="//127.0.0.1:9/$ID" alt="img">'),
    ("rel-backslashes", "protocol-relative", '<a href="\\\\127.0.0.1:9/$ID">x</a>'),
    ("rel-slash-backslash", "protocol-relative", '<a href="/\\127.0.0.1:9/$ID">x</a>'),
    ("rel-credentials", "protocol-relative", '<a href="https://ok.example@127.0.0.1:9/$ID">x</a>'),
    (
        "rel-credentials-backslash",
        "protocol-relative",
        '<a href="https://127.0.0.1:9\\@ok.example/$ID">x</a>',
    ),
    # -- frames, objects, embeds ------------------------------------------
    ("frame-iframe-src", "frames", f'<iframe src="{URL}"></iframe>'),
    ("frame-iframe-js", "frames", f'<iframe src="javascript:{ALERT}"></iframe>'),
    (
        "frame-iframe-srcdoc",
        "frames",
        f'<iframe srcdoc="&lt;script&gt;{ALERT}&lt;/script&gt;"></iframe>',
    ),
    ("frame-object-data", "frames", f'<object data="{URL}"></object>'),
    ("frame-object-js", "frames", f'<object data="javascript:{ALERT}"></object>'),
    (
        "frame-object-base64",
        "frames",
        '<object data="data:text/html;base64,' + _b64(f"<script>{ALERT}</script>") + '"></object>',
    ),
    ("frame-embed-src", "frames", f'<embed src="{URL}">'),
    ("frame-embed-js", "frames", f'<embed src="javascript:{ALERT}">'),
    ("frame-frameset", "frames", f'<frameset><frame src="{URL}"></frameset>'),
    ("frame-applet", "frames", f'<applet code="x" codebase="{URL}">a</applet>'),
    ("frame-portal", "frames", f'<portal src="{URL}"></portal>'),
    # -- document-level elements ------------------------------------------
    (
        "meta-refresh-js",
        "meta-base-link",
        f'<meta http-equiv="refresh" content="0;url=javascript:{ALERT}">',
    ),
    ("meta-refresh-http", "meta-base-link", f'<meta http-equiv="refresh" content="0;url={URL}">'),
    (
        "meta-csp",
        "meta-base-link",
        "<meta http-equiv=\"Content-Security-Policy\" content=\"script-src 'unsafe-inline'\"><script>alert('$ID')</script>",
    ),
    (
        "base-href",
        "meta-base-link",
        f'<base href="{URL}/"><a href="rel">relative</a><img src="pic.png">',
    ),
    ("base-js", "meta-base-link", f'<base href="javascript:{ALERT}//"><a href="/x">x</a>'),
    ("link-import", "meta-base-link", f'<link rel=import href="{URL}">'),
    ("link-stylesheet", "meta-base-link", f'<link rel=stylesheet href="{URL}">'),
    ("link-prefetch", "meta-base-link", f'<link rel=prefetch href="{URL}">'),
    ("xml-stylesheet-pi", "meta-base-link", f'<?xml-stylesheet href="{URL}"?><p>x</p>'),
    # -- forms --------------------------------------------------------------
    ("form-action-js", "forms", f'<form action="javascript:{ALERT}"><button>go</button></form>'),
    (
        "form-formaction",
        "forms",
        f'<form><button formaction="javascript:{ALERT}">x</button></form>',
    ),
    (
        "form-input-formaction",
        "forms",
        f'<form id=f></form><input form=f type=submit formaction="javascript:{ALERT}" value=go>',
    ),
    (
        "form-action-http",
        "forms",
        f'<form action="{URL}" method=post><input name=a value=b><input type=submit></form>',
    ),
    ("form-input-image", "forms", f'<input type=image src="{URL}">'),
    ("form-isindex", "forms", f'<isindex action="javascript:{ALERT}" type=image>'),
    ("form-keygen", "forms", f"<keygen autofocus onfocus={ALERT}>"),
    ("form-button-onclick", "forms", f'<button onclick="{ALERT}">press</button>'),
    ("form-clobber", "forms", "<form id=test><input id=attributes name=$ID></form><img name=body>"),
    # -- CSS ------------------------------------------------------------------
    ("css-attr-url", "css", f"<p style=\"background:url('{URL}')\">x</p>"),
    ("css-attr-expression", "css", f'<p style="width:expression({ALERT})">x</p>'),
    ("css-attr-js-url", "css", f'<p style="background-image:url(javascript:{ALERT})">x</p>'),
    ("css-attr-escaped", "css", f'<p style="background:u\\72l({URL})">x</p>'),
    ("css-attr-moz-binding", "css", f'<p style="-moz-binding:url({URL}#xss)">x</p>'),
    (
        "css-attr-behavior",
        "css",
        '<p style="behavior:url(#default#time2)" onbegin="alert(\'$ID\')">x</p>',
    ),
    ("css-style-import", "css", f"<style>@import '{URL}';</style><p>x</p>"),
    ("css-style-background", "css", f"<style>body{{background:url({URL})}}</style>"),
    ("css-style-breakout", "css", f'<style><img src="</style><img src=x onerror={ALERT}//">'),
    ("css-unknown-element-style", "css", f'<xss style="behavior:url({URL})">x</xss>'),
    # -- SVG and MathML namespace confusion ---------------------------------
    ("ns-svg-style-img", "svg-math", f"<svg><style><img src=x onerror={ALERT}></style></svg>"),
    (
        "ns-math-mglyph",
        "svg-math",
        f"<math><mtext><table><mglyph><style><img src=x onerror={ALERT}>",
    ),
    (
        "ns-math-mtext-style-comment",
        "svg-math",
        f"<math><mi><table><mi><style><!--</style><img src=x onerror={ALERT}>-->",
    ),
    (
        "ns-svg-a-xlink",
        "svg-math",
        f'<svg><a xlink:href="javascript:{ALERT}"><text x=20 y=20>click</text></a></svg>',
    ),
    ("ns-svg-script", "svg-math", f"<svg><script>{ALERT}</script></svg>"),
    ("ns-svg-script-href", "svg-math", f'<svg><script href="data:,{ALERT}"/></svg>'),
    (
        "ns-svg-use-data",
        "svg-math",
        '<svg><use href="data:image/svg+xml;base64,'
        + _b64(
            f"<svg id='x' xmlns='http://www.w3.org/2000/svg'><image href='1' onerror=\"{ALERT}\"/></svg>"
        )
        + '#x"/></svg>',
    ),
    (
        "ns-svg-foreignobject",
        "svg-math",
        f'<svg><foreignObject><iframe srcdoc="&lt;script&gt;{ALERT}&lt;/script&gt;"></iframe></foreignObject></svg>',
    ),
    (
        "ns-svg-set-href",
        "svg-math",
        f'<svg><a><set attributeName=href to="javascript:{ALERT}"/><text y=9>x</text></a></svg>',
    ),
    ("ns-math-href", "svg-math", f'<math href="javascript:{ALERT}">click</math>'),
    (
        "ns-math-maction",
        "svg-math",
        f'<math><maction actiontype="statusline" xlink:href="javascript:{ALERT}">x</maction></math>',
    ),
    (
        "ns-svg-p-breakout",
        "svg-math",
        f"<svg><p><style><img src=x onerror={ALERT}></style></p></svg>",
    ),
    (
        "ns-svg-close-p-style",
        "svg-math",
        f'<svg></p><style><a id="</style><img src=1 onerror={ALERT}>">',
    ),
    ("ns-svg-image-href", "svg-math", f'<svg><image href="{URL}"/></svg>'),
    ("ns-svg-cdata", "svg-math", f"<svg><![CDATA[<img src=x onerror={ALERT}>]]></svg>"),
    (
        "ns-math-cdata-breakout",
        "svg-math",
        f"<math><![CDATA[</math><img src=x onerror={ALERT}>]]></math>",
    ),
    (
        "ns-form-math-nesting",
        "svg-math",
        f"<form><math><mtext></form><form><mglyph><style></math><img src onerror={ALERT}>",
    ),
    # -- mutation XSS through raw-text and parser-state elements ------------
    (
        "mxss-noscript-title",
        "mxss",
        f'<noscript><p title="</noscript><img src=x onerror={ALERT}>"></noscript>',
    ),
    ("mxss-template", "mxss", f"<template><img src=x onerror={ALERT}></template>"),
    ("mxss-template-script", "mxss", f"<template><script>{ALERT}</script></template>"),
    ("mxss-textarea-inside", "mxss", f"<textarea><img src=x onerror={ALERT}></textarea>"),
    ("mxss-textarea-breakout", "mxss", f'<textarea></textarea><img src=x onerror="{ALERT}">'),
    ("mxss-title-inside", "mxss", f"<title><img src=x onerror={ALERT}></title>"),
    ("mxss-title-attr", "mxss", f'<p title="</title><img src=x onerror={ALERT}>">x</p>'),
    ("mxss-comment-breakout", "mxss", f"<!-- --><img src=x onerror={ALERT}> -->"),
    ("mxss-comment-in-attr", "mxss", f'<p title="<!--"><img src=x onerror={ALERT}>-->'),
    ("mxss-xmp", "mxss", f'<xmp><p title="</xmp><img src=x onerror={ALERT}>"></xmp>'),
    (
        "mxss-noembed",
        "mxss",
        f'<noembed><p title="</noembed><img src=x onerror={ALERT}>"></noembed>',
    ),
    (
        "mxss-noframes",
        "mxss",
        f'<noframes><p title="</noframes><img src=x onerror={ALERT}>"></noframes>',
    ),
    ("mxss-plaintext", "mxss", f"<plaintext><img src=x onerror={ALERT}>"),
    ("mxss-iframe-text", "mxss", f"<iframe><img src=x onerror={ALERT}></iframe>"),
    ("mxss-listing", "mxss", f"<listing>&lt;img src=x onerror={ALERT}&gt;</listing>"),
    (
        "mxss-select-template",
        "mxss",
        f'<select><template><style><!--</style><a rel="--></template></select><img src=x onerror={ALERT}>">',
    ),
    ("mxss-style-in-p", "mxss", f'<p><style></p><img src=x onerror="{ALERT}"></style></p>'),
    # -- attribute and tag breakouts --------------------------------------
    (
        "break-alt-quote",
        "attribute-breakout",
        f'<img src="https://ok.example/a.png" alt=\'"><script>{ALERT}</script>\'>',
    ),
    (
        "break-href-quote",
        "attribute-breakout",
        f"<a href='https://ok.example/\"onmouseover=\"{ALERT}'>x</a>",
    ),
    (
        "break-unquoted-href",
        "attribute-breakout",
        f"<a href=https://ok.example/ onclick={ALERT}>x</a>",
    ),
    ("break-backtick-attrs", "attribute-breakout", f"<img src=`x` onerror=`{ALERT}`>"),
    ("break-text-quote-script", "attribute-breakout", f'"><script>{ALERT}</script>'),
    ("break-text-single-quote", "attribute-breakout", f"'><img src=x onerror={ALERT}>"),
    ("break-unclosed-tag", "attribute-breakout", f'<img src=x onerror="{ALERT}"//'),
    (
        "break-unclosed-attr",
        "attribute-breakout",
        f'<a href="https://ok.example/ onclick={ALERT}>x</a>',
    ),
    (
        "break-tag-in-attr-name",
        "attribute-breakout",
        f'<a href="https://ok.example/" <img src=x onerror={ALERT}>>x</a>',
    ),
    (
        "break-title-markup",
        "attribute-breakout",
        f'<a href="https://ok.example/" title="<script>{ALERT}</script>">x</a>',
    ),
    (
        "break-target-opener",
        "attribute-breakout",
        '<a href="https://ok.example/$ID" target="_blank" rel="opener">x</a>',
    ),
    ("break-ping", "attribute-breakout", f'<a href="https://ok.example/" ping="{URL}">x</a>'),
    (
        "break-id-name",
        "attribute-breakout",
        '<a href="https://ok.example/" id="$ID" name="body">x</a>',
    ),
    (
        "break-class-spoof",
        "attribute-breakout",
        '<div class="rich" data-ignore="false"><p class="mention">$ID</p></div>',
    ),
    # -- Datastar attributes ------------------------------------------------
    ("ds-on-click", "datastar", f'<div data-on:click="{ALERT}">click</div>'),
    ("ds-on-click-dash", "datastar", f'<div data-on-click="{ALERT}">click</div>'),
    ("ds-init", "datastar", f'<div data-init="{FETCH}">x</div>'),
    ("ds-on-load", "datastar", f'<div data-on-load="{ALERT}">x</div>'),
    ("ds-attr-href", "datastar", f"<a data-attr:href=\"'javascript:{ALERT}'\">x</a>"),
    ("ds-attr-object", "datastar", f"<div data-attr=\"{{onclick: '{ALERT}'}}\">x</div>"),
    ("ds-signals", "datastar", f'<div data-signals="{{x: {ALERT}}}">x</div>'),
    ("ds-signals-key", "datastar", f'<div data-signals:foo="{ALERT}">x</div>'),
    ("ds-effect", "datastar", f'<div data-effect="{PWN}">x</div>'),
    ("ds-upper", "datastar", f'<div DATA-ON:CLICK="{ALERT}">x</div>'),
    ("ds-mixed-case-init", "datastar", f'<p Data-Init="{PWN}">x</p>'),
    ("ds-on-window-modifier", "datastar", f'<div data-on:load__window="{ALERT}">x</div>'),
    ("ds-computed", "datastar", f'<div data-computed:foo="{ALERT}">x</div>'),
    ("ds-text", "datastar", f'<span data-text="{ALERT}">x</span>'),
    ("ds-show", "datastar", f'<span data-show="{PWN}">x</span>'),
    ("ds-class", "datastar", f'<span data-class="{{a: {ALERT}}}">x</span>'),
    ("ds-bind", "datastar", f'<input data-bind:x="{ALERT}">'),
    ("ds-on-intersect", "datastar", f'<div data-on-intersect="{ALERT}">x</div>'),
    ("ds-on-interval", "datastar", f'<div data-on-interval="{ALERT}">x</div>'),
    ("ds-on-signal-patch", "datastar", f'<div data-on-signal-patch="{ALERT}">x</div>'),
    (
        "ds-mention-class",
        "datastar",
        f'<a class="mention u-url" data-init="{PWN}" href="https://m.example/@u">@<span>u</span></a>',
    ),
    ("ds-img", "datastar", f'<img src="https://ok.example/a.png" data-init="{FETCH}" alt="a">'),
    ("ds-ignore-self", "datastar", f'<div data-ignore__self data-on:click="{ALERT}">x</div>'),
    ("ds-ignore-morph", "datastar", f'<div data-ignore-morph data-init="{ALERT}">x</div>'),
    ("ds-text-only", "datastar", f"data-on:click=\"{ALERT}\" data-init='{PWN}'"),
    # -- Unicode tricks -----------------------------------------------------
    ("uni-rtl-override", "unicode", "<p>\u202egnp.exe $ID</p>"),
    ("uni-fullwidth-js", "unicode", f'<a href="ｊａｖａｓｃｒｉｐｔ:{ALERT}">x</a>'),
    ("uni-zwsp-scheme", "unicode", f'<a href="java\u200bscript:{ALERT}">x</a>'),
    ("uni-zwsp-entity", "unicode", "<a href=\"java&#8203;script:alert('$ID')\">x</a>"),
    ("uni-bom-prefix", "unicode", "<a href=\"&#xFEFF;javascript:alert('$ID')\">x</a>"),
    ("uni-line-separator", "unicode", f'<a href="\u2028javascript:{ALERT}">x</a>'),
    ("uni-homoglyph-scheme", "unicode", f'<a href="jаvascript:{ALERT}">x</a>'),
    ("uni-fullwidth-tags", "unicode", f"＜script＞{ALERT}＜/script＞"),
    ("uni-utf7", "unicode", "+ADw-script+AD4-alert('$ID')+ADw-/script+AD4-"),
    ("uni-escaped-lt", "unicode", f"\\u003cscript\\u003e{ALERT}\\u003c/script\\u003e"),
    ("uni-homoglyph-host", "unicode", '<a href="https://ехаmple.com/$ID">example.com</a>'),
    # -- comments, CDATA, declarations ------------------------------------
    ("cmt-empty-script", "comments", f"<!--><script>{ALERT}</script>"),
    ("cmt-empty-dash-script", "comments", f"<!---><script>{ALERT}</script>"),
    ("cmt-conditional", "comments", f"<!--[if IE]><script>{ALERT}</script><![endif]-->"),
    ("cmt-conditional-gte", "comments", f"<!--[if gte IE 4]><SCRIPT>{ALERT}</SCRIPT><![endif]-->"),
    ("cmt-downlevel-revealed", "comments", f"<![if !IE]><script>{ALERT}</script><![endif]>"),
    ("cmt-bang-close", "comments", f"<!-- x --!><script>{ALERT}</script>"),
    ("cdata-script", "comments", f"<![CDATA[<script>{ALERT}</script>]]>"),
    ("cdata-img", "comments", f"<![CDATA[><img src=x onerror={ALERT}>]]>"),
    (
        "decl-doctype-entity",
        "comments",
        f'<!DOCTYPE x [<!ENTITY e "<script>{ALERT}</script>">]><p>&e;</p>',
    ),
    # -- images and resource hints ----------------------------------------
    ("img-srcset", "images", f'<img srcset="{URL} 1x" alt="s">'),
    (
        "img-srcset-js",
        "images",
        f'<img src="https://ok.example/a.png" srcset="javascript:{ALERT}">',
    ),
    (
        "img-picture-source",
        "images",
        f'<picture><source srcset="{URL}"><img src="https://ok.example/a.png" alt="p"></picture>',
    ),
    (
        "img-lowsrc-dynsrc",
        "images",
        f'<img src=x lowsrc="javascript:{ALERT}" dynsrc="javascript:{ALERT}">',
    ),
    ("img-body-background", "images", f'<body background="javascript:{ALERT}">x</body>'),
    ("img-table-background", "images", f'<table background="{URL}"><tr><td>x</td></tr></table>'),
    ("img-video-poster", "images", f'<video poster="{URL}"></video>'),
    ("img-input-src", "images", f'<input type="image" src="javascript:{ALERT}">'),
    ("img-direct-remote", "images", f'<img src="{URL}-direct" alt="remote">'),
    # -- work bombs (exercise the guard path) -------------------------------
    (
        "bomb-deep-divs",
        "bombs",
        "<div>" * 3000 + f"<script>{ALERT}</script><img src=x onerror={ALERT}>",
    ),
    (
        "bomb-formatting-attrs",
        "bombs",
        "".join(f'<b a="{i}">' for i in range(1000)) + f"<p><img src=x onerror={ALERT}></p>" * 50,
    ),
    (
        "bomb-misnest",
        "bombs",
        "".join(f"<div><i a={i}></div>" for i in range(600)) + f"x<p onclick={ALERT}>y</p>",
    ),
    ("bomb-deep-quotes", "bombs", "<blockquote>" * 600 + f'<a href="javascript:{ALERT}">deep</a>'),
    ("bomb-deep-lists", "bombs", "<ul><li>" * 400 + f'<p data-init="{PWN}">deep</p>'),
    ("bomb-unclosed-tags", "bombs", f"<a <img src=x onerror={ALERT}> " * 500),
]

CASES: list[Case] = [
    Case(case_id, category, _expand(html, case_id)) for case_id, category, html in _RAW
]
