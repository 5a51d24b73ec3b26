"""The demo world: who posts what, when, on which platform. Pure: no I/O.

`DemoWorld` is deterministic for a seed and a start time: post number `i`
is made from `random.Random(f"{seed}:{i}")` and a fixed rhythm, so the same
world answers the same everywhere (the demo servers, tests, e2e) without
sharing state. About `HISTORY` posts exist before `start`; new ones appear as
the clock moves (`posts_per_minute` in all, across platforms).

The platform servers (app/demo/bluesky.py, mastodon.py, youtube.py) filter
these posts (search term, hashtag, author) and write them in their
platform's wire format. Every platform has long threads, media, reposts and
quotes, content warnings, links to the demo article site, posts about
"climate" in several languages, and hostile posts (`hostile` carries raw
markup for formats that carry HTML; the plain `text` carries the visible
tricks: bidi overrides, zalgo, a 10k-character word, markup as text).
"""

from __future__ import annotations

import functools
import hashlib
import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

PLATFORMS = ("bluesky", "mastodon", "youtube")
MASTODON_INSTANCES = ("mastodon.social", "chaos.social", "fosstodon.org")
# The demo article site (app/demo/sites.py serves it); posts link to its articles.
ARTICLE_ORIGIN = "https://courier.example"
HISTORY = 720  # posts before `start`: an hour at the default rate
THREAD_BLOCK = 40  # at most one thread starts in every block of this many posts


def utc_now() -> datetime:
    return datetime.now(UTC)


def stable_token(*parts: str, length: int = 22) -> str:
    """A stable [a-z0-9] token for ids a platform needs (DIDs, channel ids, rkeys)."""
    digest = hashlib.sha256("\x1f".join(parts).encode()).digest()
    alphabet = "abcdefghijklmnopqrstuvwxyz234567"
    number = int.from_bytes(digest, "big")
    out = []
    for _ in range(length):
        number, rest = divmod(number, 32)
        out.append(alphabet[rest])
    return "".join(out)


@dataclass(frozen=True)
class DemoAuthor:
    platform: str
    handle: str  # bluesky: lena.bsky.social; mastodon: lena@chaos.social; youtube: @Channel
    display_name: str
    lang: str
    bio: str

    @property
    def instance(self) -> str:
        """A Mastodon author's home instance ("" elsewhere)."""
        return self.handle.partition("@")[2] if self.platform == "mastodon" else ""


@dataclass(frozen=True)
class DemoMedia:
    kind: str  # "image" | "video" (for a video, `path` is its poster image)
    path: str  # served by the article site: /media/<name>.png
    alt: str
    width: int
    height: int


@dataclass(frozen=True)
class DemoArticle:
    """An article of the demo site; posts link to it, sites.py renders it."""

    slug: str
    lang: str
    title: str
    summary: str
    topic: str
    image: str  # a MEDIA name
    city: str  # where the story is set: its summary's and body's {city}
    lead: int  # which of its topic's SENTENCES its summary is (the body follows that one up)

    @property
    def url(self) -> str:
        return f"{ARTICLE_ORIGIN}/news/{self.slug}"


@dataclass(frozen=True)
class DemoPost:
    id: int  # unique, increasing with created_at, stable for a seed
    platform: str  # "bluesky" | "mastodon" | "youtube"
    instance: str  # mastodon: the author's instance; else ""
    author: DemoAuthor
    created_at: datetime  # aware UTC
    lang: str
    text: str  # plain text; hashtags, mentions and URLs appear inline
    hashtags: tuple[str, ...]
    mentions: tuple[str, ...]  # handles
    links: tuple[str, ...]
    media: tuple[DemoMedia, ...] = ()
    content_warning: str = ""  # mastodon spoiler_text
    reply_to: int | None = None  # threads: the parent post's id
    quote_of: int | None = None
    reposted_by: DemoAuthor | None = None  # a repost: this entry is the reposter's
    repost_of: int | None = None  # ...of this post (text, media, author are the original's)
    title: str = ""  # youtube video title
    hostile: str = ""  # raw hostile markup, for formats that carry HTML
    topics: tuple[str, ...] = ()
    metrics: dict[str, int] = field(default_factory=dict)


# Media the article site serves (name, width, height, alt text).
MEDIA: tuple[tuple[str, int, int, str], ...] = (
    ("flood.png", 1200, 800, "Flood water covering a street, cars half submerged"),
    ("solar.png", 1200, 675, "Rows of solar panels on a field under a clear sky"),
    ("glacier.png", 1024, 768, "A retreating glacier tongue with bare rock below it"),
    ("tram.png", 1200, 800, "A green tram crossing a bridge at dusk"),
    ("protest.png", 1080, 1080, "People holding hand-painted signs on a square"),
    ("market.png", 1200, 900, "Vegetable stalls at a covered market"),
    ("lab.png", 1200, 800, "A researcher looking at a sample through a microscope"),
    ("stage.png", 1600, 900, "A theatre stage lit in blue before the show"),
)
# Every account's picture (Mastodon's `avatar`, Bluesky's), drawn by the article site as
# its media are; not among MEDIA, so no post shows it as a photo.
AVATAR = ("avatar.png", 400, 400)
AVATAR_URL = f"{ARTICLE_ORIGIN}/media/{AVATAR[0]}"

# Per language: cities, and sentences per topic ({city}, {n} filled in).
CITIES = {
    "en": ("Leeds", "Bristol", "Portland", "Adelaide"),
    "de": ("Hamburg", "Köln", "Leipzig", "Graz"),
    "fr": ("Lyon", "Nantes", "Marseille", "Liège"),
    "es": ("Valencia", "Sevilla", "Bilbao", "Rosario"),
    "it": ("Bologna", "Torino", "Napoli", "Trieste"),
    "ja": ("大阪", "札幌", "福岡", "仙台"),
    "ar": ("عمّان", "بيروت", "الدار البيضاء", "تونس"),
    "uk": ("Київ", "Львів", "Одеса", "Харків"),
}

SENTENCES: dict[str, dict[str, tuple[str, ...]]] = {
    "en": {
        "climate": (
            "Record heat again in {city}: {n} days above 35°C this summer, and the climate "
            "models saw it coming.",
            "The city council in {city} votes tonight on its climate plan; {n} amendments "
            "are on the table.",
            "New climate data: sea level at the {city} gauge is up {n} mm since 1990.",
            "Farmers near {city} say the drought is the worst they remember. Climate "
            "adaptation money arrives too late for many.",
        ),
        "transport": (
            "{city} opens {n} km of protected bike lanes this week.",
            "Night trains are back between {city} and the coast, {n} departures a week.",
        ),
        "science": (
            "A team in {city} publishes {n} years of bird counts as open data.",
            "Peer review found {n} errors in the study everyone shared last week. Read "
            "the correction before you repost.",
        ),
        "culture": (
            "The {city} book fair had {n} visitors on its first day.",
            "Our theatre critic on the new season in {city}: bold, long, worth it.",
        ),
    },
    "de": {
        "climate": (
            "Hitzewelle in {city}: {n} Tage über 35 Grad. Der Klimawandel ist hier längst Alltag.",
            "Der Stadtrat von {city} stimmt heute über den Klimaplan ab, {n} Anträge liegen vor.",
            "Neue Klimadaten: Der Pegel in {city} liegt {n} mm über dem Wert von 1990.",
        ),
        "transport": (
            "Die Straßenbahn in {city} fährt ab Montag alle {n} Minuten.",
            "Deutschlandticket: {n} Prozent mehr Fahrgäste in {city} seit Jahresbeginn.",
        ),
        "science": (
            "Forschende in {city} veröffentlichen {n} Jahre Vogelzählungen als offene Daten.",
        ),
        "culture": (
            "Die Buchmesse in {city} zählte {n} Besucherinnen und Besucher am ersten Tag.",
        ),
    },
    "fr": {
        "climate": (
            "Canicule à {city} : {n} jours au-dessus de 35 °C. Le changement climatique "
            "n'est plus une hypothèse.",
            "Le conseil municipal de {city} vote ce soir son plan climat, {n} amendements déposés.",
        ),
        "transport": ("{city} ouvre {n} km de pistes cyclables protégées cette semaine.",),
        "science": ("Une équipe de {city} publie {n} ans de comptages d'oiseaux en accès libre.",),
        "culture": ("Le festival de {city} annonce {n} spectacles gratuits cet été.",),
    },
    "es": {
        "climate": (
            "Ola de calor en {city}: {n} días por encima de 35 °C. El cambio climático ya "
            "está aquí.",
            "El ayuntamiento de {city} aprueba su plan climático con {n} enmiendas.",
        ),
        "transport": ("{city} estrena {n} km de carril bici protegido.",),
        "science": ("Un equipo de {city} publica {n} años de datos de aves en abierto.",),
        "culture": ("La feria del libro de {city} recibió {n} visitantes el primer día.",),
    },
    "it": {
        "climate": (
            "Caldo record a {city}: {n} giorni sopra i 35 °C. La crisi climatica è qui.",
            "Il consiglio comunale di {city} vota stasera il piano per il clima.",
        ),
        "transport": ("A {city} aprono {n} km di piste ciclabili protette.",),
        "science": ("Un gruppo di ricerca di {city} pubblica {n} anni di dati sugli uccelli.",),
        "culture": ("Il salone del libro di {city} ha contato {n} visitatori nel primo giorno.",),
    },
    "ja": {
        "climate": (
            "{city}で猛暑日が{n}日目に。気候変動の影響は明らかです。",
            "{city}市議会が今夜、気候行動計画を採決します。修正案は{n}件。",
        ),
        "transport": ("{city}の路面電車が{n}分間隔で運行を再開しました。",),
        "science": ("{city}の研究チームが{n}年分の野鳥調査データを公開。",),
        "culture": ("{city}のブックフェア初日の来場者は{n}人でした。",),
    },
    "ar": {
        "climate": (
            "موجة حر في {city}: {n} يوماً فوق 35 درجة. تغيّر المناخ لم يعد احتمالاً.",
            "مجلس مدينة {city} يصوّت الليلة على خطة المناخ.",
        ),
        "transport": ("افتتاح {n} كم من مسارات الدراجات في {city} هذا الأسبوع.",),
        "science": ("فريق بحثي في {city} ينشر بيانات {n} عاماً من رصد الطيور.",),
        "culture": ("معرض الكتاب في {city} استقبل {n} زائر في يومه الأول.",),
    },
    "uk": {
        "climate": (
            "Спека в місті {city}: {n} днів понад 35 °C. Зміна клімату вже тут.",
            "Міська рада {city} сьогодні голосує за кліматичний план.",
        ),
        "transport": ("У місті {city} відкрили {n} км захищених велодоріжок.",),
        "science": ("Науковці з міста {city} оприлюднили {n} років спостережень за птахами.",),
        "culture": ("Книжковий ярмарок у місті {city} відвідали {n} людей за перший день.",),
    },
}

# Hashtags per topic and language; every climate post also carries #climate,
# so a "climate" search or hashtag timeline finds it on every platform.
TOPIC_TAGS = {
    "climate": {"en": "ClimateCrisis", "de": "Klima", "fr": "climat", "es": "clima"},
    "transport": {"en": "transit", "de": "Verkehrswende", "fr": "vélo", "es": "movilidad"},
    "science": {"en": "OpenData", "de": "Wissenschaft", "fr": "science", "es": "ciencia"},
    "culture": {"en": "books", "de": "Kultur", "fr": "culture", "es": "cultura"},
}
THREAD_OPENERS = {
    "en": "A thread on what we learned covering {city} this week 🧵",
    "de": "Ein Thread über unsere Recherche in {city} 🧵",
    "fr": "Un fil sur notre enquête à {city} 🧵",
    "es": "Un hilo sobre lo que aprendimos en {city} 🧵",
    "it": "Un thread su quello che abbiamo visto a {city} 🧵",
    "ja": "{city}取材で分かったことをスレッドでまとめます🧵",
    "ar": "سلسلة تغريدات عمّا تعلّمناه في {city} 🧵",
    "uk": "Тред про те, що ми дізналися у місті {city} 🧵",
}
WARNINGS = {
    "en": "Flood images, injured people",
    "de": "Bilder von Verletzten",
    "fr": "Images de blessés",
    "es": "Imágenes de personas heridas",
    "it": "Immagini di feriti",
    "ja": "負傷者の画像",
    "ar": "صور مصابين",
    "uk": "Зображення поранених",
}

# Hostile content: raw markup (for HTML-carrying formats) and the plain-text
# tricks (`text`). Every one must end inert in Newsdesk.
HOSTILE_MARKUP = (
    '<script>alert("xss")</script><p>Breaking news</p>',
    # A picture the demo serves: `src="x"` resolved against the post's own page (a
    # chaos.social status) and every wall load showed the proxy's 404 in the console.
    f'<img src="{ARTICLE_ORIGIN}/media/protest.png" onerror="alert(document.cookie)"'
    ' onload="alert(document.cookie)"><p>Photo of the day</p>',
    '<a href="javascript:alert(1)">Read the full story</a>',
    '<svg onload="alert(1)"><a xlink:href="javascript:alert(2)"><text>map</text></a></svg>',
    '<style>body{display:none}</style><p style="position:fixed;inset:0;'
    'background:url(javascript:alert(1))">Live blog</p>',
    '<iframe src="https://evil.example/frame"></iframe><form action="https://evil.example/">'
    '<input name="password"></form>',
    '<meta http-equiv="refresh" content="0;url=https://evil.example/"><base href="https://evil.example/">',
)
HOSTILE_TEXT = (
    "Invoice \u202egnp.exe\u202c attached",  # right-to-left override hides the extension
    "Z\u0337\u0322\u0353\u0308a\u0338\u034e\u0314l\u0336\u0330\u035dg\u0334\u031e\u0344o\u0335\u032b\u0360 "
    "is coming",
    "A" * 10_000,  # one 10k-character word
    '<script>alert("this is text, not markup")</script>',
    "Click [here](javascript:alert(1)) &lt;b&gt;bold&lt;/b&gt; \u200b\u200b\u2066hidden\u2069",
)

# (handle stem, display name, language, bio)
_PEOPLE = (
    ("maya.okafor", "Maya Okafor", "en", "Climate reporter. Floods, heat, and the people in them."),
    ("jonas.brandt", "Jonas Brandt", "de", "Lokaljournalist in Hamburg. Verkehr und Stadt."),
    ("camille.roux", "Camille Roux", "fr", "Journaliste sciences et environnement."),
    ("lucia.ferrer", "Lucía Ferrer", "es", "Periodista de datos. Clima y ciudades."),
    ("giulia.conti", "Giulia Conti", "it", "Cronista a Bologna. Cultura e ambiente."),
    ("haruto.sato", "佐藤 陽翔", "ja", "地方紙の記者。気候と交通を取材。"),
    ("layla.haddad", "ليلى حداد", "ar", "صحفية تغطي المناخ والمدن."),
    ("olena.kovalenko", "Олена Коваленко", "uk", "Журналістка. Клімат і енергетика."),
    ("sam.whitfield", "Sam Whitfield", "en", "Transit nerd, night train fan, editor."),
    ("newsroom.lab", "Newsroom Lab", "en", "Tools and tips for small newsrooms."),
)
_CHANNELS = (
    ("ClimateDeskTV", "Climate Desk TV", "en", "Explainers on climate science, every week."),
    ("StadtKanal", "StadtKanal", "de", "Reportagen aus deutschen Städten."),
    ("ScienceMinute", "Science Minute", "en", "One-minute science news."),
    ("LaPlanete", "La Planète", "fr", "Documentaires sur le climat et la biodiversité."),
    ("NoticiasVerdes", "Noticias Verdes", "es", "Noticias de clima y energía."),
    ("KyotoLens", "京都レンズ", "ja", "日本各地の気候と暮らしを映像で。"),
)
# Most posts per platform, in a fixed rhythm so every platform gets every kind of post.
_RHYTHM = (
    "bluesky",
    "mastodon",
    "bluesky",
    "mastodon",
    "youtube",
    "bluesky",
    "mastodon",
    "bluesky",
    "mastodon",
    "mastodon",
    "bluesky",
    "youtube",
)
_TOPICS = ("climate", "transport", "science", "culture")


def _authors(platform: str) -> tuple[DemoAuthor, ...]:
    if platform == "bluesky":
        return tuple(
            DemoAuthor("bluesky", f"{stem}.bsky.social", name, lang, bio)
            for stem, name, lang, bio in _PEOPLE
        )
    if platform == "mastodon":
        return tuple(
            DemoAuthor(
                "mastodon",
                f"{stem.split('.')[0]}@{MASTODON_INSTANCES[n % len(MASTODON_INSTANCES)]}",
                name,
                lang,
                bio,
            )
            for n, (stem, name, lang, bio) in enumerate(_PEOPLE)
        )
    if platform == "youtube":
        return tuple(
            DemoAuthor("youtube", f"@{handle}", name, lang, bio)
            for handle, name, lang, bio in _CHANNELS
        )
    raise ValueError(f"no such demo platform: {platform!r}")


def _articles() -> tuple[DemoArticle, ...]:
    """One article per (language, topic), so posts link in their own language."""
    made: list[DemoArticle] = []
    for lang, topics in SENTENCES.items():
        for n, (topic, sentences) in enumerate(topics.items()):
            city = CITIES[lang][n % len(CITIES[lang])]
            text = sentences[0].format(city=city, n=12 + n)
            title = text.split(":")[0].split("：")[0].split("。")[0].strip()[:90]
            made.append(
                DemoArticle(
                    slug=f"{lang}-{topic}-{stable_token(lang, topic, length=6)}",
                    lang=lang,
                    title=title,
                    summary=text,
                    topic=topic,
                    image=MEDIA[(n * 3 + len(made)) % len(MEDIA)][0],
                    city=city,
                    lead=0,
                )
            )
    return tuple(made)


ARTICLES = _articles()


def _id_of(index: int) -> int:
    """Post ids start at 1 with the oldest history post."""
    return index + HISTORY + 1


def _index_of(post_id: int) -> int:
    return post_id - HISTORY - 1


@dataclass(frozen=True)
class _Thread:
    first: int  # index of its first post
    length: int
    platform: str
    author: DemoAuthor
    topic: str


class DemoWorld:
    """Every demo platform's posts, deterministic for (seed, start)."""

    def __init__(
        self,
        seed: int = 7,
        start: datetime | None = None,
        posts_per_minute: float = 12.0,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        if posts_per_minute <= 0:
            raise ValueError("posts_per_minute must be positive")
        self.seed = seed
        self.clock = clock
        self.start = (start or clock().replace(second=0, microsecond=0)).astimezone(UTC)
        self.interval = 60.0 / posts_per_minute  # seconds between posts, on average
        self._authors = {platform: _authors(platform) for platform in PLATFORMS}
        self._post = functools.lru_cache(maxsize=20_000)(self._make)

    # The public API ---------------------------------------------------------

    def authors(self, platform: str) -> list[DemoAuthor]:
        if platform not in self._authors:
            raise ValueError(f"no such demo platform: {platform!r}")
        return list(self._authors[platform])

    def posts(self, platform: str, now: datetime | None = None) -> list[DemoPost]:
        """Everything published on `platform` up to `now` (default: the clock), newest first."""
        if platform not in self._authors:
            raise ValueError(f"no such demo platform: {platform!r}")
        last = self._index_at(now or self.clock())
        found = []
        for index in range(last, -HISTORY - 1, -1):
            if self._platform(index) == platform:
                found.append(self._post(index))
        return found

    def post(self, post_id: int) -> DemoPost | None:
        """The post with this id, if it has been published by now."""
        index = _index_of(post_id)
        if index < -HISTORY or index > self._index_at(self.clock()):
            return None
        return self._post(index)

    def articles(self) -> tuple[DemoArticle, ...]:
        return ARTICLES

    # Time ---------------------------------------------------------------------

    def _jitter(self, index: int) -> float:
        return random.Random(f"{self.seed}:t:{index}").random() * 0.9

    def created_at(self, index: int) -> datetime:
        offset = (index + self._jitter(index)) * self.interval
        return self.start + timedelta(seconds=offset)

    def _index_at(self, now: datetime) -> int:
        """The last post index published at or before `now`."""
        index = math.floor((now - self.start).total_seconds() / self.interval)
        if self.created_at(index) > now:
            index -= 1
        return max(index, -HISTORY - 1)

    # Who posts what -------------------------------------------------------------

    def _thread(self, index: int) -> _Thread | None:
        """The thread post `index` is part of, if any."""
        block, position = divmod(index, THREAD_BLOCK)
        rng = random.Random(f"{self.seed}:thread:{block}")
        if rng.random() < 0.6:
            return None
        length = rng.randint(5, 16)
        if position >= length:
            return None
        platform = rng.choice(("bluesky", "mastodon"))
        author = rng.choice(self._authors[platform])
        return _Thread(block * THREAD_BLOCK, length, platform, author, rng.choice(_TOPICS))

    def _platform(self, index: int) -> str:
        thread = self._thread(index)
        return thread.platform if thread else _RHYTHM[index % len(_RHYTHM)]

    def _make(self, index: int) -> DemoPost:
        rng = random.Random(f"{self.seed}:{index}")
        thread = self._thread(index)
        platform = self._platform(index)
        author = thread.author if thread else rng.choice(self._authors[platform])
        lang = author.lang if thread or rng.random() < 0.85 else "en"
        topic = thread.topic if thread else "climate" if index % 7 == 0 else rng.choice(_TOPICS)
        city = rng.choice(CITIES[lang])
        sentences = SENTENCES[lang].get(topic) or SENTENCES[lang]["climate"]
        text = rng.choice(sentences).format(city=city, n=rng.randint(3, 400))
        post = dict(
            id=_id_of(index),
            platform=platform,
            instance=author.instance,
            author=author,
            created_at=self.created_at(index),
            lang=lang,
            topics=(topic,),
            metrics=self._metrics(rng, platform),
        )
        if thread:
            number, length = index - thread.first + 1, thread.length
            tags: tuple[str, ...] = ()
            if number == 1:  # the opener carries the thread's hashtags
                tags = self._hashtags(rng, topic, lang)
                text = " ".join([THREAD_OPENERS[lang].format(city=city), *(f"#{t}" for t in tags)])
            text = f"{text} ({number}/{length})"
            reply_to = None if number == 1 else _id_of(index - 1)
            return DemoPost(
                **post,  # type: ignore[arg-type]
                text=text,
                hashtags=tags,
                mentions=(),
                links=(),
                reply_to=reply_to,
            )
        shared = self._shared(rng, index, platform)
        if shared is not None and rng.random() < 0.5:
            original = self._post(_index_of(shared))
            reposter = rng.choice([a for a in self._authors[platform] if a != original.author])
            return DemoPost(
                id=_id_of(index),
                platform=platform,
                instance=original.instance,
                author=original.author,
                created_at=self.created_at(index),
                lang=original.lang,
                text=original.text,
                hashtags=original.hashtags,
                mentions=original.mentions,
                links=original.links,
                media=original.media,
                content_warning=original.content_warning,
                title=original.title,
                hostile=original.hostile,
                topics=original.topics,
                metrics=original.metrics,
                reposted_by=reposter,
                repost_of=original.id,
            )
        hashtags = self._hashtags(rng, topic, lang)
        mentions: tuple[str, ...] = ()
        if platform != "youtube" and rng.random() < 0.25:
            other = rng.choice([a for a in self._authors[platform] if a != author])
            mentions = (other.handle,)
            text = f"{text} @{other.handle}"
        links: tuple[str, ...] = ()
        if rng.random() < 0.35 or platform == "youtube":
            links = (self._article(rng, lang, topic).url,)
            text = f"{text} {links[0]}"
        if hashtags:
            text = f"{text} " + " ".join(f"#{tag}" for tag in hashtags)
        hostile = ""
        if index % 23 == 0:
            hostile = HOSTILE_MARKUP[rng.randrange(len(HOSTILE_MARKUP))]
            text = f"{HOSTILE_TEXT[rng.randrange(len(HOSTILE_TEXT))]} {text}"
        media = self._media(rng, platform)
        warning = ""
        if platform == "mastodon" and (index % 17 == 0 or (media and rng.random() < 0.2)):
            warning = WARNINGS[lang]
        title = ""
        if platform == "youtube":
            title = text.split(". ")[0].split("。")[0][:90]
        return DemoPost(
            **post,  # type: ignore[arg-type]
            text=text,
            hashtags=hashtags,
            mentions=mentions,
            links=links,
            media=media,
            content_warning=warning,
            quote_of=shared if shared is not None and platform == "bluesky" else None,
            title=title,
            hostile=hostile,
        )

    def _shared(self, rng: random.Random, index: int, platform: str) -> int | None:
        """An earlier post on the same platform to repost or quote, now and then."""
        if platform == "youtube" or rng.random() > 0.18:
            return None
        for back in range(rng.randint(2, 12), 60):
            earlier = index - back
            if earlier < -HISTORY:
                return None
            if self._platform(earlier) == platform and self._thread(earlier) is None:
                candidate = self._post(earlier)
                if candidate.repost_of is None:
                    return _id_of(earlier)
        return None

    def _hashtags(self, rng: random.Random, topic: str, lang: str) -> tuple[str, ...]:
        tags: list[str] = []
        if topic == "climate":
            tags.append("climate")
        local = TOPIC_TAGS[topic].get(lang)
        if local and rng.random() < 0.7:
            tags.append(local)
        return tuple(dict.fromkeys(tags))

    def _article(self, rng: random.Random, lang: str, topic: str) -> DemoArticle:
        matching = [a for a in ARTICLES if a.lang == lang and a.topic == topic]
        return matching[0] if matching else rng.choice(ARTICLES)

    def _media(self, rng: random.Random, platform: str) -> tuple[DemoMedia, ...]:
        if platform == "youtube":
            name, width, height, alt = rng.choice(MEDIA)
            return (DemoMedia("video", f"/media/{name}", alt, width, height),)
        if rng.random() > 0.3:
            return ()
        picked = rng.sample(MEDIA, rng.choice((1, 1, 1, 2, 4)))
        return tuple(
            DemoMedia("image", f"/media/{name}", alt, width, height)
            for name, width, height, alt in picked
        )

    def _metrics(self, rng: random.Random, platform: str) -> dict[str, int]:
        if platform == "youtube":
            return {
                "views": rng.randint(200, 250_000),
                "likes": rng.randint(0, 9000),
                "replies": rng.randint(0, 700),
            }
        return {
            "replies": rng.randint(0, 40),
            "reposts": rng.randint(0, 120),
            "likes": rng.randint(0, 900),
            "quotes": rng.randint(0, 15),
        }
