"""What the demo site's articles say: per language and topic, the sentences a body is made of.

An article's headline and summary come from `SENTENCES` (content.py, shared with
the posts); its body is the summary followed by sentences of this table for the
article's own language and topic, all set in the headline's city, so a saved
demo article reads as one story. Every sentence stands on its own (any order
reads), `{city}` is the article's city and `{n}` a count from a few to a few
hundred. Everything here is made up: people are named by role, never by name.
"""

from __future__ import annotations

STORY_SENTENCES: dict[str, dict[str, tuple[str, ...]]] = {
    "en": {
        "climate": (
            "Emergency planners in {city} have opened {n} cooling rooms in libraries and "
            "community halls.",
            "Volunteers are checking on older neighbours who live alone, going door to door "
            "with bottled water.",
            "The water utility asks households to water gardens only in the evening until the "
            "reservoirs recover.",
            "The local weather station logged its warmest night on record, and forecasters "
            "expect more of them.",
            "Under the draft climate plan, {n} school yards would swap asphalt for trees and shade.",
            "Engineers are raising the river wall after {n} cellars were flooded last winter.",
            "Climate scientists who studied the region say summers like this one will be normal "
            "by the 2050s.",
            "Residents can comment on the plan online until the end of the month; {n} have "
            "already done so.",
            "Farmers outside {city} are trying crops that need less water, from sorghum to "
            "chickpeas.",
            "The council wants every public building to run on renewable power within ten years.",
            "Paramedics answered {n} heat-related calls in a single week, most of them from "
            "people over seventy.",
            "Street trees planted a decade ago now keep some pavements several degrees cooler "
            "at midday.",
        ),
        "transport": (
            "Cyclists waited years for the new routes, and {n} of them rode the first stretch on "
            "opening morning.",
            "Counters on the main bridge recorded {n} bikes an hour during the morning rush.",
            "The transport authority says buses will run every ten minutes on the busiest lines "
            "from next month.",
            "The sleeper service sold out its first {n} berths within a day of going on sale.",
            "Shop owners on the high street feared losing parking, but footfall has held steady.",
            "The new timetable adds late departures so that shift workers can get home after "
            "midnight.",
            "Some {n} new bike racks are going in at stations, schools and the central library.",
            "Parents near the ring road asked for safer crossings, and {n} of them signed the "
            "petition.",
            "Fares stay frozen this year, the authority confirmed, while it tests tap-and-go "
            "payment on trams.",
            "Traffic engineers will publish the first year of counts as open data in the spring.",
            "Cargo bikes now deliver {n} parcels a day in the old town, replacing several vans.",
            "Since the main station got step-free access this autumn, wheelchair users no "
            "longer need to book help in advance.",
        ),
        "science": (
            "The dataset covers {n} survey sites around {city}, from allotments to riverbanks.",
            "Most of the counts were made by volunteers who walk the same route every spring.",
            "The records show swifts arriving earlier than they did when the survey began.",
            "Anyone can download the data, and the code used to clean it, under an open licence.",
            "The authors corrected the paper within a week and thanked the readers who spotted "
            "the problems.",
            "Statisticians not involved in the work say the corrected figures still support the "
            "main finding.",
            "The lab plans an open evening where residents can look at samples under the "
            "microscope.",
            "A follow-up project has signed up {n} schools to count birds in their playgrounds.",
            "Funding for the survey runs for three more years, after which the team hopes the "
            "city will take it on.",
            "The team publishes its methods before any results, so that others can check the "
            "analysis.",
            "Journal editors say errors found after publication are common, and quick "
            "corrections are a good sign.",
            "Early results suggest green roofs in {city} attract more insects than expected, with "
            "{n} species recorded so far.",
        ),
        "culture": (
            "Queues stretched round the block before the doors opened, and {n} readings were "
            "sold out by noon.",
            "Small presses had a hall of their own this year, with {n} stands.",
            "Children's authors drew the biggest crowds, with whole school classes arriving by "
            "coach.",
            "Booksellers report that translated fiction sold better than ever.",
            "The theatre's new director wants shorter runs and more plays by writers from {city}.",
            "Tickets for under-25s cost a fraction of the usual price all season.",
            "Rehearsals were open to the public for the first time, and {n} people came to watch.",
            "The city's libraries have bought {n} copies of this year's featured novel for "
            "reading groups.",
            "Volunteers, many of them students, kept the venues running late into the night.",
            "Organisers say the fair will move to a larger venue next year to fit everyone in.",
            "Critics praised the set, a single revolving wall that becomes a house, a ship and "
            "a courtroom.",
        ),
    },
    "de": {
        "climate": (
            "Die Stadt {city} hat {n} kühle Räume in Bibliotheken und Gemeindezentren geöffnet.",
            "Freiwillige schauen bei älteren Nachbarinnen und Nachbarn vorbei, die allein "
            "leben, und bringen Wasser.",
            "Die Stadtwerke bitten darum, Gärten nur abends zu gießen, bis sich die Speicher "
            "erholt haben.",
            "Die örtliche Wetterstation meldete die wärmste Nacht seit Beginn der Messungen.",
            "Nach dem Entwurf des Klimaplans sollen {n} Schulhöfe entsiegelt und mit Bäumen "
            "bepflanzt werden.",
            "Am Fluss wird die Schutzmauer erhöht, nachdem im vergangenen Winter {n} Keller "
            "vollgelaufen waren.",
            "Klimaforschende erwarten, dass solche Sommer in der Region bis 2050 normal sind.",
            "Bürgerinnen und Bürger können den Plan bis Monatsende online kommentieren; {n} "
            "haben das schon getan.",
            "Landwirtinnen und Landwirte im Umland von {city} testen Sorten, die mit weniger "
            "Wasser auskommen.",
            "Bis 2035 sollen alle städtischen Gebäude mit Ökostrom versorgt werden.",
            "Der Rettungsdienst rückte in einer einzigen Woche {n}-mal wegen Hitzebeschwerden aus.",
        ),
        "transport": (
            "Zur Eröffnung der neuen Radroute kamen am ersten Morgen {n} Menschen mit dem Fahrrad.",
            "Die Zählstelle an der Hauptbrücke registriert in der Spitzenstunde {n} Räder.",
            "Die Verkehrsbetriebe setzen auf den vollen Linien ab nächstem Monat längere "
            "Bahnen ein.",
            "Mit dem neuen Fahrplan fahren die letzten Bahnen nach Mitternacht, auch für "
            "Menschen im Schichtdienst.",
            "Der Einzelhandel in der Innenstadt hatte Sorge um Parkplätze, doch die Kundschaft "
            "blieb.",
            "An Bahnhöfen und Schulen entstehen {n} neue Fahrradstellplätze.",
            "Eltern an der Ringstraße fordern sichere Übergänge; {n} haben die Petition "
            "unterschrieben.",
            "Lastenräder liefern in der Altstadt täglich {n} Pakete aus und ersetzen mehrere "
            "Transporter.",
            "Die Fahrgastzahlen sollen im Frühjahr als offene Daten erscheinen.",
            "Seit dem Umbau ist der Hauptbahnhof stufenlos erreichbar, ein großer Schritt für "
            "Menschen im Rollstuhl.",
            "Die Preise bleiben in diesem Jahr stabil, bestätigten die Verkehrsbetriebe.",
        ),
        "science": (
            "Der Datensatz umfasst {n} Zählstellen rund um {city}, von Kleingärten bis zu "
            "Flussufern.",
            "Die meisten Zählungen stammen von Ehrenamtlichen, die jedes Frühjahr dieselbe "
            "Strecke gehen.",
            "Die Daten zeigen, dass Mauersegler heute früher ankommen als zu Beginn der Erhebung.",
            "Daten und Auswertungscode stehen unter einer offenen Lizenz zum Herunterladen bereit.",
            "Unabhängige Statistikerinnen halten die Ergebnisse für belastbar.",
            "Ein Folgeprojekt hat {n} Schulen gewonnen, die auf ihren Schulhöfen Vögel zählen.",
            "Das Team legt seine Methoden vor den Ergebnissen offen, damit andere die "
            "Auswertung prüfen können.",
            "Auf begrünten Dächern in {city} wurden bisher {n} Insektenarten nachgewiesen.",
            "Die Förderung läuft noch drei Jahre; danach soll die Stadt die Erhebung übernehmen.",
            "Bei einem offenen Abend im Labor können Interessierte Proben unter dem Mikroskop "
            "ansehen.",
        ),
        "culture": (
            "Schon vor der Öffnung standen die Menschen Schlange, {n} Lesungen waren mittags "
            "ausverkauft.",
            "Unabhängige Verlage hatten in diesem Jahr eine eigene Halle mit {n} Ständen.",
            "Das größte Publikum zogen Kinderbuchautorinnen an, ganze Schulklassen kamen mit "
            "dem Bus.",
            "Übersetzte Literatur verkaufte sich so gut wie nie zuvor, berichten Buchhandlungen.",
            "Das Theater zeigt in der neuen Spielzeit mehr Stücke von Autorinnen und Autoren "
            "aus {city}.",
            "Für Menschen unter 25 gibt es Karten zu einem Bruchteil des üblichen Preises.",
            "Zum ersten Mal waren Proben öffentlich, {n} Menschen sahen zu.",
            "Die Stadtbibliothek hat {n} Exemplare des Buchs der Stadt für Lesekreise angeschafft.",
            "Ehrenamtliche, viele davon Studierende, hielten die Säle bis spät in die Nacht offen.",
            "Im nächsten Jahr zieht die Messe in größere Hallen um, damit alle Platz finden.",
        ),
    },
    "fr": {
        "climate": (
            "La ville de {city} a ouvert {n} salles rafraîchies dans les bibliothèques et les "
            "maisons de quartier.",
            "Des bénévoles rendent visite aux personnes âgées isolées pour leur apporter de l'eau.",
            "Le projet de plan climat prévoit de planter des arbres dans {n} cours d'école.",
            "La station météo locale a enregistré la nuit la plus chaude depuis le début des "
            "mesures.",
            "Les habitants peuvent commenter le plan en ligne jusqu'à la fin du mois.",
            "Autour de {city}, des agriculteurs testent des cultures qui demandent moins d'eau.",
        ),
        "transport": (
            "Dès le premier matin, {n} cyclistes ont emprunté le nouvel itinéraire.",
            "Le compteur du pont principal enregistre {n} vélos par heure aux heures de pointe.",
            "Les commerçants craignaient de perdre des places de stationnement, mais la "
            "fréquentation est restée stable.",
            "La ville installe {n} nouveaux arceaux à vélos près des gares et des écoles.",
            "Le nouvel horaire ajoute des départs tardifs pour les personnes qui travaillent de "
            "nuit.",
            "Les données de comptage seront publiées en accès libre au printemps.",
        ),
        "science": (
            "Le jeu de données couvre {n} sites de comptage autour de {city}.",
            "La plupart des relevés ont été faits par des bénévoles qui suivent le même parcours "
            "chaque printemps.",
            "Les données montrent que les martinets arrivent plus tôt qu'au début de l'étude.",
            "Les données et le code d'analyse sont téléchargeables sous licence libre.",
            "Un projet de suite réunit {n} écoles qui comptent les oiseaux dans leur cour.",
            "L'équipe publie ses méthodes avant ses résultats, pour que d'autres puissent "
            "vérifier l'analyse.",
        ),
        "culture": (
            "Le programme compte des concerts, du théâtre de rue et {n} lectures pour enfants.",
            "Les spectacles ont lieu dans les parcs et sur les places de {city}.",
            "Des bénévoles, souvent étudiants, font tourner le festival jusque tard dans la nuit.",
            "Les compagnies de la région occupent une bonne partie de l'affiche cette année.",
            "Pour la première fois, les répétitions sont ouvertes au public.",
            "Les organisateurs attendent {n} bénévoles pour l'édition de cet été.",
        ),
    },
    "es": {
        "climate": (
            "{city} ha abierto {n} refugios climáticos en bibliotecas y centros cívicos.",
            "Voluntarios visitan a personas mayores que viven solas para llevarles agua.",
            "El plan climático prevé plantar árboles en {n} patios escolares.",
            "La estación meteorológica local registró la noche más calurosa desde que hay "
            "mediciones.",
            "Los vecinos pueden comentar el plan en línea hasta final de mes.",
            "Agricultores de los alrededores de {city} prueban cultivos que necesitan menos agua.",
        ),
        "transport": (
            "El primer día, {n} ciclistas recorrieron el nuevo tramo.",
            "El contador del puente principal registra {n} bicicletas por hora en hora punta.",
            "Los comerciantes temían perder plazas de aparcamiento, pero la afluencia se ha "
            "mantenido.",
            "Se instalarán {n} nuevos aparcabicis junto a estaciones y colegios.",
            "El nuevo horario añade salidas nocturnas para quienes trabajan por turnos.",
            "Los datos de los contadores se publicarán en abierto en primavera.",
        ),
        "science": (
            "Los datos abarcan {n} puntos de muestreo alrededor de {city}.",
            "La mayoría de los conteos los hicieron voluntarios que recorren la misma ruta cada "
            "primavera.",
            "Según los datos, los vencejos llegan antes que cuando empezó el estudio.",
            "Los datos y el código del análisis se pueden descargar con licencia abierta.",
            "Un proyecto posterior ha sumado {n} colegios que cuentan aves en sus patios.",
            "El equipo publica sus métodos antes que sus resultados para que otros puedan "
            "revisar el análisis.",
        ),
        "culture": (
            "Antes de abrir ya había colas, y {n} presentaciones se llenaron a mediodía.",
            "Las editoriales independientes tuvieron este año un pabellón propio con {n} casetas.",
            "La literatura infantil atrajo al mayor público, con clases enteras de colegio.",
            "Los libreros dicen que la narrativa traducida se vendió mejor que nunca.",
            "Voluntarios, muchos de ellos estudiantes, mantuvieron la feria abierta hasta tarde.",
            "La organización anuncia que la feria se trasladará a un recinto más grande el "
            "próximo año.",
        ),
    },
    "it": {
        "climate": (
            "Il comune di {city} ha aperto {n} sale climatizzate in biblioteche e centri civici.",
            "Alcuni volontari fanno visita agli anziani che vivono soli per portare loro acqua.",
            "Il piano per il clima prevede nuovi alberi in {n} cortili scolastici.",
            "La stazione meteo locale ha registrato la notte più calda da quando esistono "
            "misurazioni.",
            "I cittadini possono commentare il piano online fino alla fine del mese.",
            "Gli agricoltori intorno a {city} provano colture che richiedono meno acqua.",
        ),
        "transport": (
            "Il primo giorno {n} ciclisti hanno percorso il nuovo tratto.",
            "Il contatore sul ponte principale registra {n} biciclette all'ora nelle ore di punta.",
            "I commercianti temevano di perdere parcheggi, ma l'afflusso è rimasto stabile.",
            "Vicino a stazioni e scuole arrivano {n} nuove rastrelliere per bici.",
            "Il nuovo orario aggiunge corse serali per chi lavora a turni.",
            "I dati dei contatori saranno pubblicati in formato aperto in primavera.",
        ),
        "science": (
            "I dati coprono {n} punti di rilevamento intorno a {city}.",
            "La maggior parte dei conteggi è opera di volontari che percorrono lo stesso "
            "itinerario ogni primavera.",
            "I dati mostrano che i rondoni arrivano prima rispetto all'inizio dello studio.",
            "Dati e codice di analisi si possono scaricare con licenza aperta.",
            "Un progetto successivo coinvolge {n} scuole che contano gli uccelli nei cortili.",
            "Il gruppo pubblica i metodi prima dei risultati, così che altri possano verificare "
            "l'analisi.",
        ),
        "culture": (
            "Già prima dell'apertura c'era la fila, e {n} presentazioni erano esaurite a "
            "mezzogiorno.",
            "Gli editori indipendenti avevano quest'anno un padiglione tutto loro con {n} stand.",
            "Gli autori per ragazzi hanno attirato il pubblico più numeroso.",
            "I librai raccontano che la narrativa tradotta non si era mai venduta così bene.",
            "I volontari, molti dei quali studenti, hanno tenuto aperti gli spazi fino a tarda "
            "sera.",
            "Il prossimo anno il salone si sposterà in una sede più grande.",
        ),
    },
    "ja": {
        "climate": (
            "{city}市は図書館や公民館など{n}か所に涼める場所を開設しました。",
            "ボランティアが一人暮らしの高齢者の家を訪ね、水を届けています。",
            "気候行動計画の案では、{n}校の校庭に木を植えるとしています。",
            "地元の観測所は、観測開始以来最も暑い夜を記録しました。",
            "市民は今月末まで、オンラインで計画に意見を寄せることができます。",
            "{city}周辺の農家は、少ない水で育つ作物を試しています。",
        ),
        "transport": (
            "新しいダイヤでは、夜勤の人のために深夜の便が加わりました。",
            "中心部の橋では、朝のラッシュ時に1時間あたり{n}台の自転車が通ります。",
            "駅や学校の近くに{n}台分の駐輪場が新たに設けられます。",
            "商店街では駐車場の減少を心配する声もありましたが、客足は変わっていません。",
            "交通局は利用者数を春にオープンデータとして公開する予定です。",
            "駅のバリアフリー化が終わり、車いすの利用者も乗り換えやすくなりました。",
        ),
        "science": (
            "データは{city}周辺の{n}か所の調査地点をカバーしています。",
            "調査の多くは、毎年春に同じルートを歩くボランティアによるものです。",
            "アマツバメの飛来が調査開始当時より早くなっていることが分かりました。",
            "データと解析コードはオープンライセンスで誰でもダウンロードできます。",
            "後続のプロジェクトには{n}校が参加し、校庭で野鳥を数えています。",
            "チームは結果より先に手法を公開し、ほかの研究者が検証できるようにしています。",
        ),
        "culture": (
            "開場前から行列ができ、{n}件の朗読会が昼までに満席になりました。",
            "今年は小さな出版社のための専用ホールが設けられ、{n}のブースが並びました。",
            "最も多くの来場者を集めたのは児童書の作家たちでした。",
            "書店によると、翻訳小説がこれまでになくよく売れたということです。",
            "学生を中心としたボランティアが夜遅くまで会場を支えました。",
            "主催者は来年、より広い会場に移る予定だと話しています。",
        ),
    },
    "ar": {
        "climate": (
            "افتتحت السلطات المحلية في {city} {n} مكاناً مكيّفاً في المكتبات والمراكز المجتمعية.",
            "يزور متطوعون كبار السن الذين يعيشون وحدهم ويحملون إليهم الماء.",
            "تنص خطة المناخ على زراعة الأشجار في {n} ساحة مدرسية.",
            "سجّلت محطة الرصد المحلية أشدّ الليالي حرارةً منذ بدء القياسات.",
            "يمكن للسكان التعليق على الخطة عبر الإنترنت حتى نهاية الشهر.",
            "يجرّب المزارعون في محيط {city} محاصيل تحتاج إلى كمية أقل من الماء.",
        ),
        "transport": (
            "في اليوم الأول، سلك {n} من راكبي الدراجات المسار الجديد.",
            "يسجّل العدّاد على الجسر الرئيسي {n} دراجة في الساعة وقت الذروة.",
            "خشي أصحاب المتاجر خسارة مواقف السيارات، لكن عدد الزبائن بقي مستقراً.",
            "سيتم تركيب {n} حاملاً جديداً للدراجات قرب المحطات والمدارس.",
            "يضيف الجدول الجديد رحلات ليلية لمن يعملون بنظام المناوبات.",
            "ستُنشر بيانات العدّادات للعموم في الربيع.",
        ),
        "science": (
            "تغطي البيانات {n} موقعاً للرصد حول {city}.",
            "أجرى معظمَ عمليات العدّ متطوعون يسلكون المسار نفسه كل ربيع.",
            "تُظهر البيانات أن طيور السمامة تصل الآن أبكر مما كانت تصل عند بدء الدراسة.",
            "يمكن لأي شخص تنزيل البيانات وشيفرة التحليل بموجب ترخيص مفتوح.",
            "انضمت {n} مدرسة إلى مشروع لاحق لعدّ الطيور في ساحاتها.",
            "ينشر الفريق أساليبه قبل نتائجه حتى يتمكن الآخرون من مراجعة التحليل.",
        ),
        "culture": (
            "اصطفّ الزوار قبل افتتاح الأبواب، ونفدت مقاعد {n} جلسة قراءة قبل الظهر.",
            "خُصّصت هذا العام قاعة لدور النشر الصغيرة ضمّت {n} جناحاً.",
            "استقطب كتّاب أدب الأطفال أكبر عدد من الزوار.",
            "يقول باعة الكتب إن الروايات المترجمة بيعت أكثر من أي وقت مضى.",
            "أبقى المتطوعون، ومعظمهم من الطلاب، القاعات مفتوحة حتى ساعة متأخرة.",
            "يعتزم المنظمون نقل المعرض إلى مكان أوسع العام المقبل.",
        ),
    },
    # Counts stand after a dash ("загалом {n}"), so no noun has to agree with a number.
    "uk": {
        "climate": (
            "У місті {city} відкрили прохолодні приміщення в бібліотеках і громадських "
            "центрах — загалом {n}.",
            "Волонтери навідують літніх людей, які живуть самі, і приносять їм воду.",
            "Кліматичний план передбачає висадити дерева на шкільних подвір'ях по всьому місту.",
            "Місцева метеостанція зафіксувала найтеплішу ніч за всю історію вимірювань.",
            "Мешканці можуть коментувати план онлайн до кінця місяця.",
            "Фермери в околицях випробовують культури, яким потрібно менше води.",
        ),
        "transport": (
            "Першого ж ранку новим маршрутом проїхали велосипедисти — лічильник нарахував {n}.",
            "Крамарі боялися втратити місця для паркування, але відвідувачів не поменшало.",
            "Біля вокзалів і шкіл встановлять нові велопарковки.",
            "Новий розклад додає пізні рейси для тих, хто працює позмінно.",
            "Дані лічильників оприлюднять як відкриті дані навесні.",
            "Після ремонту до вокзалу можна дістатися без сходинок, і людям на візках стало "
            "легше подорожувати.",
        ),
        "science": (
            "Дані охоплюють пункти спостереження довкола міста {city} — загалом {n}.",
            "Більшість підрахунків зробили волонтери, які щовесни проходять той самий маршрут.",
            "Дані показують, що серпокрильці прилітають раніше, ніж на початку дослідження.",
            "Дані та код аналізу можна завантажити за відкритою ліцензією.",
            "До наступного проєкту долучилися школи, учні яких рахують птахів на подвір'ях.",
            "Команда публікує методи до результатів, щоб інші могли перевірити аналіз.",
        ),
        "culture": (
            "Ще до відкриття вишикувалися черги, а квитки на читання розібрали до полудня.",
            "Цього року невеликі видавництва мали окрему залу.",
            "Найбільше відвідувачів зібрали автори дитячих книжок.",
            "Книгарні кажуть, що перекладна проза продавалася краще, ніж будь-коли.",
            "Волонтери, здебільшого студенти, тримали зали відкритими до пізнього вечора.",
            "Наступного року організатори планують перенести ярмарок до більшого приміщення.",
        ),
    },
}

# Per language and topic, per headline of SENTENCES[lang][topic] (in the same order): what
# carries that headline on. It is the body's first paragraph, so the story picks up its own
# headline before it widens to the topic.
FOLLOW_UPS: dict[str, dict[str, tuple[tuple[str, ...], ...]]] = {
    "en": {
        "climate": (
            (
                "Forecasters say the heat will last into next week, with little rain in sight.",
                "Public pools in {city} have extended their opening hours until ten at night.",
            ),
            (
                "Most of the amendments concern the timetable for insulating council homes.",
                "Councillors expect the plan to pass in some form; the question is how fast.",
            ),
            (
                "The gauge has been read every day for decades, first by hand and now by a sensor.",
                "Hydrologists say the rise matches what the models predicted.",
            ),
            (
                "Wells that had never run dry in living memory were empty by midsummer.",
                "A regional fund for irrigation and water storage opens for applications in spring.",
            ),
        ),
        "transport": (
            (
                "The lanes are separated from traffic by kerbs and planters, not just paint.",
                "The first stretch links the station with the hospital and the university.",
            ),
            (
                "The trains leave in the late evening and arrive before breakfast.",
                "A seat costs little more than the coach; a bed in a sleeper compartment, rather "
                "more.",
            ),
        ),
        "science": (
            (
                "The counts began with a group of birdwatchers who wrote everything down in a "
                "notebook.",
                "Each record says where, when and who counted, so that others can repeat the walk.",
            ),
            (
                "Most of the errors were in one table of results, and the authors have published "
                "a correction.",
                "The study's main claim had spread widely before anyone checked the numbers.",
            ),
        ),
        "culture": (
            (
                "The fair runs until Sunday, and organisers expect even more visitors at the "
                "weekend.",
                "Entry is free for children and students.",
            ),
            (
                "The opening play lasts nearly four hours, and the audience stayed to the end.",
                "The season has eleven productions, five of them new plays.",
            ),
        ),
    },
    "de": {
        "climate": (
            (
                "Der Wetterdienst rechnet frühestens Ende nächster Woche mit Abkühlung.",
                "Die Freibäder in {city} haben bis 22 Uhr geöffnet.",
            ),
            (
                "Die meisten Anträge betreffen den Zeitplan für die Sanierung städtischer "
                "Wohnungen.",
                "Eine Mehrheit für den Plan gilt als sicher, offen ist nur, in welcher Form.",
            ),
            (
                "Der Pegel wird seit Jahrzehnten täglich abgelesen, früher von Hand, heute "
                "automatisch.",
                "Fachleute sagen, der Anstieg entspreche dem, was die Modelle erwartet haben.",
            ),
        ),
        "transport": (
            (
                "Möglich machen das neue Fahrzeuge, die in den vergangenen Monaten geliefert "
                "wurden.",
                "Abends und am Wochenende bleibt es beim bisherigen Takt.",
            ),
            (
                "Am stärksten wuchs die Nachfrage auf den Pendlerstrecken ins Umland.",
                "Die Verkehrsbetriebe haben deshalb zusätzliche Wagen bestellt.",
            ),
        ),
        "science": (
            (
                "Die Zählungen begannen mit einer Gruppe von Vogelfreunden, die alles in ein "
                "Notizbuch schrieben.",
                "Zu jedem Eintrag gehören Ort, Zeit und wer gezählt hat, damit andere die Runde "
                "wiederholen können.",
            ),
        ),
        "culture": (
            (
                "Die Messe dauert bis Sonntag, am Wochenende erwarten die Veranstalter noch mehr "
                "Andrang.",
                "Kinder und Studierende haben freien Eintritt.",
            ),
        ),
    },
    "fr": {
        "climate": (
            (
                "Les prévisionnistes n'attendent pas de baisse des températures avant la semaine "
                "prochaine.",
            ),
            ("La plupart des amendements portent sur le calendrier de rénovation des logements.",),
        ),
        "transport": (
            (
                "Les pistes sont séparées de la circulation par des bordures et des jardinières, "
                "pas seulement par de la peinture.",
            ),
        ),
        "science": (
            (
                "Chaque relevé indique le lieu, la date et la personne qui a compté, pour que "
                "d'autres puissent refaire le parcours.",
            ),
        ),
        "culture": (("Le festival dure tout l'été, avec des spectacles chaque fin de semaine.",),),
    },
    "es": {
        "climate": (
            (
                "Los meteorólogos no esperan que bajen las temperaturas antes de la semana que viene.",
            ),
            ("La mayoría de las enmiendas se refieren al calendario para rehabilitar viviendas.",),
        ),
        "transport": (
            (
                "Los carriles están separados del tráfico por bordillos y jardineras, no solo por "
                "pintura.",
            ),
        ),
        "science": (
            (
                "Cada registro indica el lugar, la fecha y quién contó, para que otros puedan "
                "repetir el recorrido.",
            ),
        ),
        "culture": (
            (
                "La feria sigue abierta hasta el domingo, y la organización espera aún más público "
                "el fin de semana.",
            ),
        ),
    },
    "it": {
        "climate": (
            (
                "I meteorologi non prevedono un calo delle temperature prima della prossima settimana.",
            ),
            (
                "La maggior parte degli emendamenti riguarda i tempi per la ristrutturazione delle "
                "case popolari.",
            ),
        ),
        "transport": (
            ("Le piste sono separate dal traffico da cordoli e fioriere, non solo dalla vernice.",),
        ),
        "science": (
            (
                "Ogni rilevamento indica luogo, data e chi ha contato, così che altri possano "
                "ripetere il percorso.",
            ),
        ),
        "culture": (
            (
                "Il salone resta aperto fino a domenica, e per il fine settimana si attende ancora "
                "più pubblico.",
            ),
        ),
    },
    "ja": {
        "climate": (
            ("気象台によると、この暑さは来週まで続く見込みです。",),
            ("修正案の多くは、市営住宅の断熱改修の時期に関するものです。",),
        ),
        "transport": (("改修工事が終わり、全線で運転できるようになりました。",),),
        "science": (
            ("記録には場所と日時、数えた人が書かれており、誰でも同じ調査を繰り返せます。",),
        ),
        "culture": (("フェアは日曜日まで開かれ、週末にはさらに多くの来場者が見込まれています。",),),
    },
    "ar": {
        "climate": (
            ("يتوقع خبراء الأرصاد أن تستمر الحرارة حتى الأسبوع المقبل.",),
            ("تتعلق معظم التعديلات المقترحة بالجدول الزمني لتحسين عزل المساكن.",),
        ),
        "transport": (
            ("تفصل المسارات عن حركة السيارات حواجز وأحواض نباتات، لا مجرد خطوط مطلية.",),
        ),
        "science": (
            ("يذكر كل سجل المكان والتاريخ ومن أجرى العدّ، حتى يتمكن الآخرون من تكرار الجولة.",),
        ),
        "culture": (
            ("يستمر المعرض حتى يوم الأحد، ويتوقع المنظمون إقبالاً أكبر في عطلة نهاية الأسبوع.",),
        ),
    },
    "uk": {
        "climate": (
            ("Синоптики не очікують похолодання до наступного тижня.",),
            ("Більшість поправок стосується графіка утеплення житлових будинків.",),
        ),
        "transport": (
            (
                "Велодоріжки відокремлені від проїжджої частини бордюрами та квітниками, а не "
                "лише розміткою.",
            ),
        ),
        "science": (
            (
                "У кожному записі вказано місце, дату й того, хто рахував, тож інші можуть "
                "повторити маршрут.",
            ),
        ),
        "culture": (
            (
                "Ярмарок триватиме до неділі, а на вихідних організатори чекають ще більше відвідувачів.",
            ),
        ),
    },
}
