"""German rule tables for the risk screen (data only; the logic is in ``screen.py``).

Patterns run over the light normal form (``screen.normalise_light``): lower case, accents and
umlauts folded (ü -> u, ß -> ss), punctuation as a clause boundary ``|``. Rows are
``(weight, regex, flags)`` with the flags documented in ``screen.py``.
"""

from __future__ import annotations

import re

LANG = "de"

# A gap of up to N words that is not a negation ("ich will mich nicht umbringen").
_NEG = r"(?:nicht|nie|niemals|kein|keine|keinen|keinesfalls)"
_GAP = r"(?:(?!" + _NEG + r"\b)\w+ ){0,3}"
_GAP6 = r"(?:(?!" + _NEG + r"\b)\w+ ){0,6}"
PILLS = (
    r"(?:tabletten|pillen|schlaftabletten|schlafmittel|medikamente|medis|paracetamol"
    r"|ibuprofen|antidepressiva|beruhigungsmittel|insulin|tavor|tramadol)"
)
_MANY = (
    r"(?:alle|ganze|ganzen|packung|packungen|schachtel|dose|blister|flasche|handvoll"
    r"|zu viele|viel zu viele|\d{2,})"
)
_HIGH = (
    r"(?:brucke|dach|hochhaus|balkon|klippe|parkhaus|turm|rand|kante|fenstersims|gleis"
    r"|gleisen|gleise|schienen|bahnsteig|geländer|gelander|abgrund)"
)

MEDICINE_WORD = "medikamente"  # a medicine name from assets/safety/medicines.txt reads as this

ELISIONS: list[tuple[str, str]] = [
    (r"\b(\w+)'s\b", r"\1 es"),  # "hab's" -> "hab es", "geht's"
]

# Chat spellings and common misspellings -> canonical words.
TOKEN_MAP: dict[str, str] = {
    "hab": "habe",
    "grad": "gerade",
    "gerad": "gerade",
    "ne": "eine",
    "nen": "einen",
    "nem": "einem",
    "bissl": "bisschen",
    "nich": "nicht",
    "nit": "nicht",
    "net": "nicht",
    "ned": "nicht",
    "nix": "nichts",
    "is": "ist",
    "umbrigen": "umbringen",
    "umbringn": "umbringen",
    "umbrinegn": "umbringen",
    "selbstmort": "selbstmord",
    "suizit": "suizid",
    "sterbn": "sterben",
    "tablleten": "tabletten",
    "tablette": "tabletten",
    "pille": "pillen",
    "mich selbst": "mich",
    "wos": "was",
    "mir selbst": "mir",
    "kms": "mich umbringen",
    "ritz": "ritze",
    # umlauts written out ("ueberdosis"); the light normal form folds ü -> u
    "ueberdosis": "uberdosis",
    "bruecke": "brucke",
    "gelaender": "gelander",
    "muede": "mude",
    "lebensmuede": "lebensmude",
    "toeten": "toten",
    "umzubrigen": "umzubringen",
    "erhaengen": "erhangen",
    "aufhaengen": "aufhangen",
    "aufzuhaengen": "aufzuhangen",
    "erschiessn": "erschiessen",
    "moechte": "mochte",
    "moecht": "mochte",
    "wuerde": "wurde",
    "waere": "ware",
    "wuensche": "wunsche",
    "wuenschte": "wunschte",
    "fuer": "fur",
    "ueber": "uber",
    "stuerzen": "sturzen",
    "schluss": "schluss",
    "zuege": "zug",
    "huebsch": "hubsch",
    "koennte": "konnte",
    "hoert": "hort",
    "naechste": "nachste",
    "naechsten": "nachsten",
    "abschiedsbriefe": "abschiedsbriefe",
    "toedliche": "todliche",
    "toedlich": "todlich",
    "schlaftablette": "schlaftabletten",
    "tabs": "tabletten",
    "steh": "stehe",
    "sitz": "sitze",
    "hock": "hocke",
    "lieg": "liege",
    "werf": "werfe",
    "spring": "springe",
    "beend": "beende",
    "uberdoses": "uberdosis",
    "mocht": "mochte",
    "nimmer": "nicht mehr",  # "ich möcht nimmer leben"
    # dialect (Bavarian, Austrian, Berlin, Swiss) in the words of risk
    "i": "ich",
    "mog": "mag",
    "nimma": "nicht mehr",
    "nimmi": "nicht mehr",
    "nume": "nicht mehr",
    "lebn": "leben",
    "wui": "will",
    "hob": "habe",
    "hot": "hat",
    "gsogt": "gesagt",
    "gsagt": "gesagt",
    "daschlogt": "erschlagt",
    "daschlagt": "erschlagt",
    "derschlagt": "erschlagt",
    "derschlogt": "erschlagt",
    "mi": "mich",
    "ick": "ich",
    "keen": "kein",
    "keene": "keine",
    "uff": "auf",
    "dit": "das",
    "et": "es",
    "wat": "was",
    "nehm": "nehme",
    "sturmgwehr": "sturmgewehr",
    "uffs": "aufs",
    "aushoit": "aushalt",
    "hoit": "halt",
    "angschaut": "angeschaut",
    "wia": "wie",
    "scho": "schon",
    "ogschaut": "angeschaut",
    "bruckn": "brucke",
    "woch": "woche",
    "ma": "mir",
    "de": "die",
    "gwehr": "gewehr",
}
# Words matched with edit distance <= 1 (all >= 6 letters).
FUZZY_WORDS = (
    "umbringen",
    "suizidal",
    "selbstmord",
    "tabletten",
    "schlaftabletten",
    "abschiedsbrief",
    "abschiedsbriefe",
    "verabschiedet",
    "testament",
    "sterben",
    "aufwachen",
    "hoffnungslos",
    "pulsadern",
    "geschluckt",
    "selbstverletzung",
)
PHRASE_MAP: list[tuple[str, str]] = [
    (r"\bmich selbst\b", "mich"),
    (r"\bmir selbst\b", "mir"),
    (r"\bu bahn\b", "ubahn"),
]
FILLERS = frozenset(
    {
        "einfach",
        "echt",
        "wirklich",
        "halt",
        "eben",
        "total",
        "voll",
        "ja",
        "doch",
        "mal",
        "wohl",
        "eigentlich",
        "ehrlich",
        "gesagt",
        "so",
        "irgendwie",
        "grade",
        "schon",
    }
)
HYPERBOLE = re.compile(r"\b(?:haha\w*|hihi\w*|lol+|xd|nur spass|war ein witz|scherz)\b")
SERIOUS = re.compile(r"\b(?:ernst|kein witz|kein scherz|im ernst|ernsthaft)\b")
# a method joke about an everyday annoyance (see rules_en.JOKE_METHOD)
JOKE_METHOD = re.compile(
    r"\b(?:spring\w*|sturz\w*|werf\w* mich|schmeiss\w* mich|hang\w* mich"
    r"|erhang\w*|erschiess\w*|erschies\w*|leg\w* mich (?:\w+ )?auf die gleise"
    r"|vor den zug)\b"
)
JOKE_TRIVIAL = re.compile(
    r"\b(?:meeting\w*|besprechung\w*|teams|zoom|call|vorlesung\w*"
    r"|vortrag|unterricht|montag\w*|stau|wlan|internet"
    r"|drucker|laptop|ladekabel|werbung|lied|song|serie|folge|bossfight"
    r"|endgegner|ikea|hochzeit|party|schwieger\w*|tante|nachbar\w*"
    r"|warteschleife\w*|hotline|kundenservice|steuererklarung|formular\w*"
    r"|papierkram|mails?|email\w*|prasentation|teambuilding|staubsaug\w*"
    r"|schlange|vermieter\w*|schlager|schlussel|fahrkarte|ticket|kontrolleur\w*|mittagessen|brotdose"
    r"|code|excel|diktat)\b"
)
JOKE_IF = re.compile(
    r"\b(?:wenn|falls|noch (?:ein)?mal|noch so|schon wieder|lieber|konnt|konnte)\b"
)


# A denial in the user's own words ("ich will nicht sterben"): read by screen.denied.
DENIAL = re.compile(
    r"\b(?:ich )?(?:will|mochte|werde|wurde|moechte) (?:mich )?(?:doch |ja )?nicht (?:sterben|umbringen"
    r"|toten|das leben nehmen)\b|\bbin (?:doch |ja )?nicht (?:suizidal|lebensmude)\b"
)

# An explicit harmless purpose ("wie verschrieben", "um die Glühbirne zu wechseln"): when the rules
# see no risk, the learned layer may not raise such a message past concern (learned.py).
PURPOSE = re.compile(
    r"\bwie (?:verschrieben|verordnet|vom arzt|der arzt (?:gesagt|meinte))\b"
    r"|\b(?:arzt|arztin|doc|doktor|hausarzt|hausarztin) (?:\w+ ){0,2}(?:verschrieben|verordnet)\b"
    r"|\b(?:gluhbirne|lampe|vorhang|gardine|regal|bild|wascheleine|schaukel|hangematte|lichterkette|rauchmelder"
    r")\w* (?:\w+ ){0,4}(?:wechseln|aufhangen|aufzuhangen|anbringen|anzubringen|festmachen|festzumachen"
    r"|machen|spannen|zu spannen|befestigen|zu befestigen|montieren)\b"
    r"|\b(?:seil|seile|schnur|leine|spanngurt)\w* (?:\w+ )?(?:fur|zum|zur) (?:das |die |den |mein |meine |unser )?(?:zelt|camping"
    r"|zelten|boot|hangematte|plane|umzug|klettern|dachtrager)\b"
    r"|\b(?:auto|motor|wagen|karre)\b.{0,30}\bspringt (?:\w+ )?nicht (?:mehr )?an\b"
)

FIRST = frozenset(
    {"ich", "mich", "mir", "mein", "meine", "meinen", "meinem", "meiner", "wir", "uns", "unser"}
)
THIRD = frozenset(
    {
        "er",
        "sie",
        "ihr",
        "ihn",
        "ihm",
        "sein",
        "seine",
        "seinen",
        "ihre",
        "ihren",
        "man",
        "freund",
        "freundin",
        "bruder",
        "schwester",
        "mutter",
        "vater",
        "mama",
        "papa",
        "oma",
        "opa",
        "sohn",
        "tochter",
        "chef",
        "chefin",
        "kollege",
        "kollegin",
        "figur",
        "hauptfigur",
        "held",
        "heldin",
        "schurke",
        "opfer",
        "roman",
        "film",
        "buch",
        "serie",
        "folge",
        "artikel",
        "nachrichten",
        "doku",
        "krimi",
        "spiel",
        "lied",
        "faust",
        "werther",
        "autor",
        "autorin",
        "jemand",
        "niemand",
        "leute",
        "patient",
        "patientin",
    }
)
MEDIA = re.compile(
    r"\b(?:roman\w*|buch|bucher|film\w*|serie|folge|staffel|figur|hauptfigur"
    r"|artikel|nachrichten|zeitung|doku\w*|krimi|podcast|hausarbeit|referat"
    r"|unterricht|vorlesung|seminar|studie|statistik|rate|praventio\w*|pravention"
    r"|geschichte|gedicht|theater|drama|spiel|rollenspiel|ehrenamt\w*"
    r"|telefonseelsorge|werther\w*|faust|tagesschau|tagesthemen|news|bericht\w*|gta|game|thriller"
    r"|gaming|zock\w*|level|mission|minecraft|fortnite|konsole|playstation"
    r"|\w+(?:rate|raten|pravention|forschung|statistik))\b"
)
# A negation inside a condition ("wenn ich die Prüfung nicht pack bring ich mich um") does not
# negate the main clause that follows it.
NEGATION_TAIL = re.compile(
    r"^(?!.*\b(?:wenn|falls|sobald|solange)\b.*\b" + _NEG + r"\b)"
    r".*\b" + _NEG + r"\b(?: (?!(?:warum|wenn|aber|wie|weil|dass|und|oder|ob|mehr)\b)[a-z]+){0,3} $"
)
REPORTED_TAIL = re.compile(
    r"\b(?:sagt|sagen|sagte|sagten|schreibt|schrieb) (?:mir )?(?:ich soll|ich solle"
    r"|dass ich)(?: \w+){0,2} $"
)
PAST = re.compile(
    r"\b(?:fruher|als kind|als teenager|als jugendlicher|vor jahren|damals"
    r"|in der schulzeit)\b"
)
NOT_PAST = re.compile(
    r"\b(?:jetzt|wieder|immer noch|noch immer|heute|gerade|seit kurzem"
    r"|zuletzt|in letzter zeit)\b"
)

IDIOMS = [
    # a parachute or bungee jump, jumping over one's own shadow
    r"\bspring\w* (?:\w+ ){0,6}(?:fallschirm\w*|bungee\w*|tandem\w*)\b|\b(?:fallschirm|bungee)\w* (?:\w+ ){0,2}spring\w*\b",
    r"\bspring\w* (?:\w+ ){0,3}uber (?:meinen|seinen|ihren|deinen|den|unseren) (?:eigenen )?schatten\b",
    # a rope bought for climbing, said before the purchase ("Klettersteig am Samstag, neues Seil gekauft")
    r"\b(?:kletter\w*|bouldern|karabiner|segel\w*|zelt\w*)\b(?: (?:\w+|\|)){0,8} (?:seil|strick)"
    r" (?:\w+ ){0,2}gekauft\b",
    r"\bspring\w* (?:\w+ ){0,6}(?:fur|als) (?:\w+ ){0,3}ein\b|\beinspring\w*\b|\beingesprungen\b",  # fill in
    r"\b(?:spring\w*|sprang|gesprungen) (?:\w+ ){0,3}ins kalte wasser\b"
    r"|\bins kalte wasser (?:\w+ )?(?:spring\w*|gesprungen|geworfen)\b",  # take the plunge
    # "das ist doch Selbstmord" (with summer tyres over the pass), "beruflicher Selbstmord"
    r"\b(?:das|des|es|dies) (?:ist|war|ware|waere|wär|waer) (?:\w+ ){0,2}(?:selbstmord|suizid)\b",
    r"\b(?:beruflich|finanziell|sozial|politisch)\w* (?:selbstmord|suizid)\b",
    r"\bmich (?:\w+ ){0,2}von (?:allen |den |meinen )?(?:kollegen|kolleginnen|kollegin|kollege"
    r"|mitschulern|mitschuelern) verabschiedet\b",
    r"\b(?:sterbe|sterben|stirbt|sterb) (?:\w+ )?vor (?:hunger|langeweile|durst|hitze|kalte"
    r"|neugier|lachen|angst|scham|muhe|sehnsucht)\b",
    r"\blach(?:e)? mich (?:\w+ )?tot\b|\btotgelacht\b|\btodmude\b|\btodlangweilig\b",
    r"\b(?:handy|akku|laptop|computer|pc|auto|batterie|pflanze|pflanzen|drucker|router) (?:ist"
    r" |sind |war )?(?:tot|gestorben|hinuber)\b",
    r"\b(?:bringt|bringen|brachte) mich (?:\w+ ){0,2}um\b",  # der Stau bringt mich um
    r"\b(?:wurde|wurd) (?:\w+ ){0,3}fur (?:einen|eine|ein|\w+) (?:\w+ )?(?:toten|morden)\b",
    r"\b(?:killt|killen|toten|umbringen|ermorden) (?:\w+ ){0,2}wenn ich (?:\w+ ){0,3}(?:zu spat"
    r"|schlecht|nicht)\b",
    r"\bmorderisch\w*\b",
    r"\b(?:prozess|task|programm|app) (?:killen|beenden|abschiessen)\b",
    r"\bmache? (?:schluss|sclhuss) mit (?:ihm|ihr|dir|meinem (?!leben)\w+|meiner \w+"
    r"|(?!allem|dem|meinem)\w+)\b",
    r"\bhat (?:\w+ ){0,2}schluss gemacht\b",
]

RULES: dict[str, list[tuple[float, str, str]]] = {
    "suicide": [
        # a weapon loaded and at hand, a blade on the skin, legs over a drop, now
        (
            0.95,
            r"^(?=.*(?<!nicht )\b(?:geladen|entsichert)\b)(?=.*\b(?:vor mir|neben mir|in der hand|in meiner"
            r" hand|zwischen (?:den|meinen) knien|auf dem schoss|auf meinem schoss|im mund|an der"
            r" schlafe|an meiner schlafe|an den kopf|am kopf|auf dem tisch)\b)(?!.*\b(?:schiessstand"
            r"|schutzenverein|jagd\w*|jager\w*|verein|training|film\w*|spiel\w*|serie|roman|museum"
            r"|szene|reinig\w*|putz\w*)\b).*?\b(?:pistole|waffe|gewehr|revolver|knarre|flinte|g36"
            r"|dienstwaffe|schrotflinte)\b",
            "e",
        ),
        (
            0.95,
            r"\b(?:messer|klinge|rasierklinge|cutter) (?:\w+ ){0,3}(?:an|auf|gegen) (?:der |die |den"
            r" |meiner |meinem |meine |meinen )?(?:haut|pulsader\w*|handgelenk\w*|hals|kehle|arm"
            r"|unterarm)\b(?!.*\b(?:kuche|gemuse|zwiebel\w*|kochen|schnitz\w*|rasier\w*|gehalten)\b)",
            "e",
        ),
        (
            0.95,
            r"^(?=.*\b(?:stock|stockwerk|etage|dach|hochhaus|fenster|brucke|balkon|gelander"
            r"|klippe|parkhaus)\b)(?!.*\b(?:pool|steg|boot|schaukel|hangematte|foto\w*|selfie"
            r"|sonnenuntergang|aussicht|picknick|sonne\w*|rauch\w*|zigarette\w*|bier)\b).*?\b(?:fusse|fuss|beine|bein) (?:\w+ ){0,3}"
            r"(?:draussen|uber der kante|uber die kante|uber dem abgrund|ins leere|in der luft"
            r"|uber dem wasser|aus dem fenster)\b",
            "e",
        ),
        (
            0.85,
            r"\b(?:rattengift|gift|frostschutzmittel|bleiche|abflussreiniger|pflanzenschutzmittel)\b"
            r".*\b(?:(?:werde|will|wurde) (?:ich )?(?:es |das |ihn |sie )?(?:\w+ ){0,3}(?:nehmen|trinken"
            r"|schlucken)|(?:nehme|trinke|schlucke) ich (?:es|das|ihn|sie))\b",
            "s",
        ),
        # families of risk the rules missed in all three languages:
        # goodbye messages other than letters; scheduled to send; a last time kept secret
        (
            0.85,
            r"^(?!.*\b(?:kolleg\w*|team|firma|job|arbeit\w*|ruhestand|rente|umzug|ausland|verein"
            r"|abteilung|buro|kunde\w*|praktikum|schule|klasse|abschiedsfeier|karte|trainer\w*|lehrer\w*"
            r"|mannschaft|abi|abschluss\w*|jahrgang|kita|verabschiedung|auslandsjahr|auslandssemester)\b).*?"
            r"\babschieds(?:mail|email|mails|nachricht|nachrichten|video|videos|sprachnachricht\w*"
            r"|text|zeilen|worte|zettel)\b",
            "s",
        ),
        (
            0.80,
            r"^(?=.*\b(?:eltern|mama|papa|mutter|vater|kinder|kindern|frau|mann|familie|schwester"
            r"|bruder|tochter|sohn)\b)(?!.*\b(?:geburtstag\w*|gluckwunsch\w*|hochzeit\w*|urlaub|muttertag"
            r"|vatertag|jahrestag|uberraschung|einladung\w*"
            r"|arbeit|kolleg\w*|weihnacht\w*|rechnung\w*|termin\w*)\b).*?\b(?:verzogert\w* senden"
            r"|zeitgesteuert\w*|zeitsteuerung|geplant\w* versand)\b(?!.*\b(?:immer|jeden|jede woche"
            r"|wochentlich|newsletter)\b)",
            "s",
        ),
        (
            0.85,
            r"\b(?:wissen|weiss|ahnt|ahnen|merkt|merken) (?:\w+ ){0,3}nicht (?:\| )?dass (?:es|das)"
            r" (?:\w+ ){0,2}(?:das letzte(?: mal)?|der letzte abschied|ein abschied|mein abschied)\b"
            r"|\bfur mich (?:war|wars|ist) (?:es |das )?(?:der letzte abschied|das letzte(?: mal)?)\b"
            r"(?!.*\b(?:umzug|ausland|ziehe|verein|job|rente|saison|trainer)\b)",
            "n",
        ),
        # lethality: enough if all at once, to look natural, in the water, from which height
        (
            0.85,
            r"^(?=.*\b(?:medikamente|tabletten|pillen|pflaster|ampulle\w*|packung\w*|\d+)\b)(?!.*\b(?:statt"
            r"|anstatt|erlaubt|beipackzettel|laut arzt|arzt (?:sagt|meint|meinte))\b).*?"
            r"\b(?:reicht|reichen|reichts) (?:das|die|es|des|sie|\d+)? ?(?:(?:\w+|\|) ){0,4}(?:wenn|um)"
            r" (?:ich|man) (?:\w+ ){0,3}(?:alle|mehrere|auf einmal|zusammen|gleichzeitig)"
            r" (?:\w+ )?(?:nehme|nimmt|nehmen|schlucke|schluckt|klebe|klebt)\b",
            "n",
        ),
        (
            0.85,
            r"\b(?:denkt|denken|glaubt|glauben|halt|halten) (?:\w+ ){0,4}(?:an einen|es war ein"
            r"|es ist ein|das war ein) (?:unfall|herzinfarkt|versehen)\b(?=.*\b(?:ich|mich|mir)\b)",
            "t",
        ),
        (
            0.90,
            r"\bwelche[rnm]? (?:balken|ast|haken|rohr|trager) (?:\w+ ){0,2}(?:mich|mein gewicht)"
            r" (?:\w+ )?(?:aushalt|halt|tragt)\b",
            "n",
        ),
        (
            0.90,
            r"\bwie (?:ich|man) (?:es|das) (?:\w+ ){0,3}(?:mache|machen|mach|schaffe) (?:\w+ ){0,2}ohne"
            r" (?:schmerzen|dass es weh tut|zu leiden)\b",
            "n",
        ),
        # scouting a height or a train: not for the view; a roof door never locked; freight trains
        (
            0.85,
            r"^(?=.*\b(?:" + _HIGH[3:-1] + r"|felsen|kreidefelsen|steilkuste|staumauer|schanze)\b)"
            r".*?\bnicht (?:wegen|fur) (?:der |die |den )?(?:aussicht|fotos?|sonnenuntergang|blick)\b",
            "n",
        ),
        (
            0.80,
            r"\b(?:tur|zugang|luke|dachluke) (?:zum|aufs) dach (?:\w+ ){0,6}(?:nie|nicht|nimmer)"
            r" (?:\w+ )?(?:abgeschlossen|abgesperrt|verschlossen|zu)\b(?=.*\b(?:oben|stock\w*|etage\w*"
            r"|runter|geschaut|angeschaut|hoch)\b)(?!.*\b(?:grill\w*|party|feier\w*|sonnen\w*|bier|hausmeister"
            r"|einbrech\w*|einbruch|sicherheit\w*|vermieter\w*)\b)",
            "s",
        ),
        (
            0.80,
            r"^(?=.*\b(?:"
            + _HIGH[3:-1]
            + r"|zug|zuge|bahn|see|meer|ostsee|nordsee|fluss|balken|turm"
            r"|felsen|wasser|strick|seil)\b).*?\b(?:hab|habe) (?:\w+ ){0,2}(?:die stelle|den balken|die brucke|die klippe|den ort"
            r"|den turm|das dach|die strecke) (?:\w+ ){0,3}(?:angeschaut|angeguckt|ausgesucht"
            r"|rausgesucht|ausgeguckt)\b(?!.*\b(?:foto\w*|picknick|zelt\w*|angel\w*|hochzeit\w*"
            r"|party|urlaub|grill\w*|geburtstag)\b)",
            "s",
        ),
        (
            0.85,
            r"^(?=.*\b(?:zeiten|fahrplan|auswendig|angeschaut|rausgesucht|uhrzeit|strecke)\b)"
            r"(?!.*\b(?:verspatung|verspatet|pendeln|pendle|anschluss|umsteigen|zu spat|foto\w*"
            r"|modell\w*|hobby|laut|larm|schlaf\w*|nerv\w*|wackel\w*|fenster)\b).*?\b(?:guterzug|guterzuge"
            r"|guterzugen|guterzuges)\b",
            "s",
        ),
        # cars: the wheel pulled into a tree or the oncoming traffic
        (
            0.85,
            r"^(?!.*\b(?:reh|wild|hirsch|katze|hund|fussganger\w*|radfahrer\w*|kind|ausweichen"
            r"|ausgewichen|glatteis|unfall|musste|fast|beinahe|aquaplaning)\b).*?(?:\b(?:lenkrad|steuer)"
            r" (?:\w+ ){0,3}(?:rumreissen|rumreiss|rumreisse|verreissen|verreisse|rumzureissen|rumziehen)\b"
            r"|\b(?:denk\w*|will|mochte|konnte|wurde|zieh\w*|lenk\w*) (?:(?:\w+|\|) ){0,4}(?:ruber|einfach|direkt)"
            r" in den gegenverkehr\b)",
            "s",
        ),
        # the water: walked in, not coming back; overboard
        (
            0.95,
            r"^(?!.*\b(?:baden|schwimm\w*|badehose|bikini|neopren\w*|urlaub|kinder|hund)\b)"
            r"(?=.*\b(?:angezogen|klamotten|kleidung|kalt|eiskalt)\b).*?\bwasser (?:\w+ ){0,2}(?:bis"
            r" )?(?:zur brust|zum hals|zur hufte|zu den schultern|zum kinn|zur taille|an die brust)\b",
            "e",
        ),
        (
            0.85,
            r"\b(?:lauf|laufe|geh|gehe|schwimm|schwimme) (?:ich )?(?:\w+ ){0,3}(?:in die|ins|in den)"
            r" (?:ostsee|nordsee|meer|see|fluss|wasser|rhein|elbe|donau)\b(?=.*\b(?:nicht (?:mehr )?"
            r"(?:wieder|zuruck)|stelle|angeguckt|angeschaut|fur immer|nie wieder)\b)",
            "s",
        ),
        (
            0.85,
            r"\b(?:komm|komme|kommen) (?:ich )?nicht (?:mehr )?(?:wieder|zuruck)\b(?! (?:vor|bis|ins"
            r"|zur|nach|zum|heim|rechtzeitig)\b)(?=.*\b(?:sucht|vermisst|merkt|keiner|niemand)\b)",
            "s",
        ),
        (0.85, r"\b(?:geh|gehe|spring|springe) (?:ich )?(?:\w+ ){0,2}uber bord\b", "s"),
        (
            0.90,
            r"\b(?:schnellste|einfachste|sicherste|schmerzloseste|beste)[nr]? (?:weg|art|methode|moglichkeit)"
            r" (?:\w+ )?(?:zu sterben|um zu sterben|sich umzubringen|mich umzubringen)\b",
            "n",
        ),
        (
            0.85,
            r"\b(?:gewehr|sturmgewehr|waffe|pistole|dienstwaffe|patronen|munition|knarre)\b.*\b(?:wie"
            r" (?:einfach )?(?:das|es|des) ware|dran wie (?:einfach )?(?:das|es|des) (?:ware|war)|weiss (?:\w+ )?"
            r"(?:\| )?wie ich (?:es|das) mache)\b",
            "n",
        ),
        (
            0.85,
            r"\b(?:stell|stelle) (?:ich )?mich (?:\w+ )?(?:aufs|auf das|auf die|auf den) (?:gleis|gleise"
            r"|schienen|bahngleis)\b",
            "s",
        ),
        # charcoal in a closed room, asked or done
        (
            0.85,
            r"\b(?:holzkohle\w*|kohlegrill|grill|einweggrill) (?:\w+ ){0,4}(?:im|in der|in die|ins)"
            r" (?:badezimmer|bad|zimmer|auto|schlafzimmer|wohnung|zelt)\b(?=.*\b(?:abdicht\w*|abkleb\w*"
            r"|zukleb\w*|reicht|tur zu|zugemacht|ritzen)\b)",
            "n",
        ),
        # giving away with "I won't need it any more"; nothing left for anyone to clear up
        (
            0.80,
            r"^(?!.*\b(?:umzug|ausland|ziehe|umziehen|neue\w*|ausmist\w*|minimalis\w*|upgrade"
            r"|rausgewachsen|zu klein|zu gross|alte\w*|kaputt\w*)\b).*?\b(?:verschenk\w*|weggegeben|abgegeben"
            r"|ubertragen|vermacht)\b.*\bbrauch\w* (?:ich |den |das |die |es )?(?:(?:\w+|\|) ){0,4}"
            r"(?:ab \w+|dann|bald|nach \w+) nicht mehr\b",
            "s",
        ),
        (
            0.80,
            r"^(?!.*\b(?:umzug|ausland|ziehe|umziehen|neue\w*|ausmist\w*|minimalis\w*|upgrade"
            r"|rausgewachsen|zu klein|zu gross|alte\w*|kaputt\w*)\b)(?=.*\b(?:ganze[snr]?|alle|alles"
            r"|sammlung|ausrustung|account)\b).*?\b(?:verschenk\w*|weggegeben|abgegeben|ubertragen"
            r"|vermacht)\b.*\bbrauch\w* (?:ich |den |das |die |es )?(?:(?:\w+|\|) ){0,4}(?:eh|sowieso)"
            r" nicht mehr\b",
            "s",
        ),
        (
            0.80,
            r"\b(?:damit|dass|was) (?:\w+ ){0,3}(?:keiner|niemand|wer) (?:\w+ ){0,2}(?:aufraumen"
            r"|wegraumen|sich kummern) muss\b(?!.*\b(?:urlaub|umzug|party|reise|ferien)\b)",
            "s",
        ),
        # medicine and drink, the medicine cabinet emptied; someone who cannot be woken
        (
            0.95,
            r"^(?=.*\b(?:tabletten|medikamente|insulin\w*|pen|abschied\w*|flasche|leer\w*|pillen)\b).*?"
            r"\b(?:nicht|kaum) (?:mehr )?(?:wachzukriegen|wach zu kriegen|aufzuwecken|ansprechbar"
            r"|wach zu bekommen)\b",
            "e",
        ),
        (
            0.90,
            r"\bals (?:ware|war|wars|ware es|war es) (?:es |das )?(?:das letzte(?: mal)?|fur immer)\b(?: \|)?"
            r" (?:(?:weil|denn) (?:es|das) (?:das )?(?:ist|so ist)|ist (?:es|das) (?:ja )?auch)\b",
            "n",
        ),
        (
            0.95,
            r"\b(?:oma|opa|mama|papa|mutter|vater|bruder|schwester|freund|freundin|sohn|tochter|er|sie)"
            r" (?:\w+ ){0,3}(?:absichtlich|mit absicht) (?:\w+ ){0,3}(?:alle|ganze[n]?|ganzen) (?:\w+ ){0,2}"
            r"\w*(?:tabletten|pillen|medikamente)\b (?:\w+ ){0,2}(?:genommen|geschluckt)\b",
            "e",
        ),
        (
            0.95,
            r"\b(?:medikamentenschrank|hausapotheke|arzneischrank|medizinschrank) (?:\w+ ){0,2}(?:leer"
            r" gemacht|leergemacht|geleert|leer|ausgeraumt|geschluckt)\b|\b"
            + PILLS
            + r" (?:\w+ ){0,3}(?:runtergespult|heruntergespult|runtergekippt)\b",
            "e",
        ),
        (
            0.90,
            r"\b(?:genug|genugend) (?:\w+ )?"
            + PILLS
            + r" (?:\w+ ){0,2}(?:zusammen|gesammelt|beisammen)\b",
            "s",
        ),
        (
            0.85,
            r"\b(?:lebensversicherung|risikolebensversicherung|versicherung) (?:\w+ ){0,5}(?:bei"
            r" )?(?:suizid|selbstmord)\b(?!.*\b(?:kunde\w*|klausur|prufung|seminar|makler\w*)\b)",
            "n",
        ),
        (0.90, r"\bgoldenen schuss\b", "s"),
        # a noose made and hung up
        (
            0.95,
            r"^(?=.*\b(?:bettlaken|laken|seil|strick|schlinge|gurtel|kabel)\b)(?!.*\b(?:schaukel"
            r"|hangematte|wasche|vorhang|lampe|kletter\w*|boxsack|heu|ballen|flaschenzug)\b).*?\bhangt"
            r" (?:\w+ ){0,2}(?:am|an dem|uber dem|uber den|an der|am dach) (?:balken|fenstergitter|gitter"
            r"|dachbalken|heizungsrohr|rohr|haken|treppengelander|trager)\b",
            "e",
        ),
        # overdose said in three words, lethality of a height, pain
        (
            0.85,
            r"\b(?:alle|alles|die ganze packung) (?:geschluckt|genommen|eingeworfen)(?= *(?:\||$))"
            r"|\bgenommen(?: \|)? alle(?= *(?:\||$))",
            "f",
        ),
        (
            0.85,
            r"\b(?:aus|ab|von) welche[mrn]? (?:stockwerk|stock|hohe|etage|brucke)\b.*\b(?:tot"
            r"|uberlebt|uberleben|sterben|stirbt)\b",
            "n",
        ),
        (
            0.85,
            r"\btut (?:es|das) weh(?: \|)? (?:wenn man |zu )?(?:ertrinken|ertrinkt|sich erhangt"
            r"|erhangen|verbluten|verblutet)\b|\b(?:ertrinken|erhangen|verbluten) (?:tut|ist)"
            r" (?:das |es )?(?:weh|schmerzhaft)\b",
            "n",
        ),
        (
            0.80,
            r"\bdamit es (?:\w+ ){0,2}wie (?:ein )?(?:versehen|unfall|herzinfarkt) aussieht\b"
            r"|\bsieht das (?:dann )?(?:\w+ )?aus wie (?:ein )?(?:versehen|unfall|herzinfarkt)\b",
            "n",
        ),
        # lethality and access questions, means asked for evasively, calm preparation
        (
            0.85,
            r"\buberlebt man (?:\w+ ){0,4}(?:sturz|fall|sprung|\d+)\b|\b(?:damit|dass) man"
            r" (?:es |das )?(?:sicher |bestimmt |garantiert )?nicht (?:mehr )?uberlebt\b",
            "t",
        ),
        (
            0.85,
            r"\b(?:seil|strick|kabel|helium\w*|holzkohle|tabletten|waffe|pistole|munition"
            r"|gewehr|klinge\w*)\b.*\b(?:frag nicht (?:warum|wieso|wofur)|nicht fur (?:die )?"
            r"(?:luftballons|ballons|den grill|die aussicht|das klettern|die party))\b",
            "n",
        ),
        (
            0.85,
            r"\b(?:brief|briefe|abschiedsbrief\w*|nachricht\w*|mail|mails|video\w*)\b.*"
            r"(?:^|\| )fur danach(?= *(?:\||$))",
            "n",
        ),
        (
            0.85,
            r"\b(?:keiner|niemand)(?: \w+){0,2} (?:weiss|ahnt)(?: \|)? dass es"
            r" (?:das letzte(?: mal)?|ein abschied) (?:war|ist|sein wird)\b",
            "n",
        ),
        (
            0.85,
            r"\b(?:notar|testament)\b.*\b(?:muss (?:ja )?(?:keiner|niemand) wissen|braucht"
            r" (?:keiner|niemand) (?:zu )?wissen) (?:wofur|warum|wieso)\b",
            "n",
        ),
        # behaviour in progress
        (
            0.95,
            r"\b(?:habe|hatte|ich) (?:\w+ ){0,6}"
            + _MANY
            + r" (?:\w+ ){0,4}"
            + PILLS
            + r" (?:\w+ ){0,3}(?:genommen|geschluckt|eingenommen|eingeworfen|getrunken)\b",
            "e",
        ),
        (
            0.95,
            r"\b(?:habe|hatte) (?:\w+ ){0,4}(?:rattengift|gift|frostschutzmittel|bleiche"
            r"|abflussreiniger|putzmittel|bleichmittel|chlorreiniger|reiniger|lauge|entkalker|spiritus|benzin"
            r"|unkrautvernichter|pflanzenschutzmittel|pestizid\w*) (?:\w+ ){0,2}(?:geschluckt|getrunken|genommen)\b",
            "e",
        ),
        (
            0.95,
            r"\b(?:er|sie|freund|freundin|bruder|schwester|mutter|vater|sohn|tochter) (?:\w+ )"
            r"{0,8}" + _MANY + r" (?:\w+ ){0,3}" + PILLS + r" (?:\w+ ){0,2}(?:genommen"
            r"|geschluckt)\b",
            "e",
        ),
        (
            0.95,
            r"\b(?:stehe|sitze|bin|hocke|liege) (?:\w+ ){0,3}(?:auf|an|am|neben|uber) (?:der"
            r" |dem |den |einer |einem )?" + _HIGH + r"\b(?=.*\b(?:spring\w*|sprung|runter"
            r"|tief|hoch|zug|warte|sterben|schluss|ende|vorbei|tot|oben|kommt gleich)\b)(?!.*\b(?:foto\w*"
            r"|aussicht|verspatung|verspatet|reparier\w*|sonnenuntergang|selfie)\b)",
            "e",
        ),
        (
            0.95,
            r"\b(?:stehe|sitze|bin|hocke|liege) (?:\w+ ){0,3}(?:auf|zwischen) (?:den |dem |der )?"
            r"(?:schienen|gleisen|gleis|bahngleisen)\b(?!.*\b(?:foto\w*|modell\w*|arbeit\w*)\b)"
            r"|\b(?:stehe|sitze|bin|hocke) (?:\w+ ){0,3}(?:am|auf dem|auf der) (?:rand|kante"
            r"|fenstersims|sims|gelander|brustung) (?:\w+ ){0,2}(?:vom|von dem|von der|des|der)"
            r" (?:\w+ )?" + _HIGH + r"\b(?!.*\b(?:foto\w*|aussicht|sonnenuntergang|selfie)\b)"
            r"|\b(?:stehe|sitze|bin|hocke) (?:\w+ ){0,3}auf der anderen seite (?:vom|von dem"
            r"|des) gelander\b",
            "e",
        ),
        (
            0.95,
            r"\b(?:seil|strick|schlinge|gurtel) (?!(?:\w+ ){0,2}(?:vorhang|lampe|schaukel|wasche)\b)"
            r"(?:\w+ ){0,2}(?:hangt|ist fest|ist"
            r" festgemacht|um den hals|um meinen hals)\b(?!.*\b(?:vorhang|lampe|gluhbirne|schaukel"
            r"|wasche|plane|zelt|boot)\b)",
            "e",
        ),
        (
            0.95,
            r"\bbin (?:\w+ ){0,3}gesprungen\b(?=.*\b(?:beine|bewegen|blut|schmerz\w*|rucken)\b)",
            "fe",
        ),
        (0.95, r"\bauto (?:\w+ ){0,3}motor (?:\w+ ){0,3}(?:lauft|an)\b(?=.*\bgarage\b)", "e"),
        # exhaust or charcoal in a closed space, a noose and something to stand on: in any order
        (
            0.95,
            r"^(?=.*\b(?:tief)?garage\b)(?!.*\b(?:springt|kaputt|werkstatt|reparier\w*)\b).*?"
            r"\bmotor (?:\w+ ){0,1}(?:lauft|laufen|angelassen)\b",
            "e",
        ),
        (
            0.95,
            r"^(?=.*\b(?:holzkohle\w*|kohlegrill|grill|kohle)\b)(?=.*\b(?:angemacht|angezundet"
            r"|brennt|gluht)\b).*?\b(?:abgeklebt|abgedichtet|zugeklebt|verklebt)\b",
            "e",
        ),
        (
            0.95,
            r"^(?=.*\b(?:holzkohle\w*|kohlegrill|grill|kohle)\b)(?=.*\b(?:angemacht|angezundet"
            r"|brennt|gluht)\b)(?=.*\b(?:laube|gartenlaube|bad|badezimmer|zimmer|auto|zelt|garage"
            r"|wohnung|schwummrig|schwindlig|kopfschmerz\w*)\b).*?\b(?:tur|turen|fenster) (?:\w+ ){0,2}"
            r"(?:zugemacht|geschlossen|zu gemacht)\b",
            "e",
        ),
        (
            0.95,
            r"^(?=.*\b(?:seil|strick|schlinge)\b)(?!.*\b(?:gluhbirne|lampe|vorhang|regal|kletter\w*"
            r"|turnhalle|schaukel|plane|zelt|boot|wasche)\b).*?\b(?:stehe|steh|bin) (?:\w+ ){0,2}auf (?:dem |der |einem |einer )?"
            r"(?:stuhl|hocker|leiter|trittleiter|kiste|eimer)\b",
            "e",
        ),
        (
            0.95,
            r"\b(?:habe|hab|ich) (?:\w+ ){0,4}uberdosis (?:\w+ ){0,3}(?:genommen|geschluckt"
            r"|eingeworfen)\b",
            "e",
        ),
        # explicit
        (
            0.95,
            r"\b(?:mich|mir) " + _GAP + r"(?:umbringen|umzubringen|umgebracht|toten|zu toten"
            r"|erhangen|zu erhangen|aufhangen|aufzuhangen|erschiessen|zu erschiessen|vergiften|ertranken"
            r"|suizidieren|das leben (?:zu )?nehmen)\b",
            "f",
        ),
        (0.95, r"\b(?:ich )?bring(?:e)? (?:ich )?mich " + _GAP + r"um\b", "f"),
        (0.95, r"\bnehme? (?:ich )?mir " + _GAP + r"das leben\b", "f"),
        (0.95, r"\b(?:meinem|mein) leben (?:ein )?ende (?:setzen|machen|bereiten)\b", "f"),
        (
            0.90,
            r"\b(?:beende|beenden|beendige) (?:ich )?(?:\w+ ){0,3}(?:mein leben|alles)\b"
            r"|\bmein leben (?:\w+ ){0,2}(?:beenden|beende)\b",
            "f",
        ),
        (
            0.85,
            r"\b(?:werfe|werfen|schmeisse|schmeiss|lege|legen) (?:ich )?mich (?:\w+ ){0,3}"
            r"(?:vor|unter) (?:den|einen|die|eine|das|ne) (?:zug|ubahn|bahn|lkw|auto|bus|laster"
            r"|s bahn|sbahn)\b|\b(?:lege|legen) (?:ich )?mich (?:\w+ ){0,2}auf (?:die|den)"
            r" (?:schienen|gleise|gleisen)\b|\bspringe? (?:ich )?(?:\w+ ){0,2}vor (?:den|einen"
            r"|die) (?:zug|ubahn|bahn|lkw)\b",
            "s",
        ),
        (
            0.85,
            r"\b(?:sturze|sturzen|werfe|werfen) (?:ich )?mich (?:\w+ ){0,3}(?:von|vom|aus)"
            r" (?:der |dem |einer |einem |meinem )?(?:\w+ )?" + _HIGH + r"\b|\b(?:sturze|werfe)"
            r" (?:ich )?mich (?:\w+ ){0,3}aus dem fenster\b",
            "s",
        ),
        (0.90, r"\b(?:selbstmord|suizid) (?:zu )?(?:begehen|machen|begehe)\b", "s"),
        (
            0.90,
            r"\b(?:suizidal|selbstmordgefahrdet|suizidgefahrdet)\b|\b(?:selbstmord|suizid)"
            r"gedanken\b",
            "t",
        ),
        (0.60, r"\b(?:suizid|selbstmord)\w*\b", "t"),
        (
            0.90,
            r"\b(?:will|mochte|mocht|wurde gern|wurde lieber|wunsche mir) " + _GAP + r"sterben\b",
            "s",
        ),
        (0.45, r"\b(?:will|wollen|mochte) sterben\b", ""),
        (
            0.90,
            r"\b(?:will|mochte|kann|werde|mag) (?:\w+ )?nicht mehr (?:leben|weiterleben|da sein"
            r"|hier sein|existieren|aufwachen)\b|\bkeine lust mehr (?:zu|auf) (?:das )?leben\b",
            "n",
        ),
        (0.90, r"\bkein(?:en)? bock mehr (?:zu|auf) (?:das |mein )?leben\b", "s"),
        (
            0.85,
            r"\blieber tot\b|\bware (?:ich )?(?:lieber )?tot\b|\bwunschte (?:\w+ )?ich ware"
            r" tot\b",
            "n",
        ),
        (0.70, r"\bware (?:\w+ )?nie geboren\b|\bnie geboren (?:worden )?(?:ware|waren)\b", "n"),
        (0.70, r"\bnicht mehr (?:aufwachen|aufzuwachen)\b", "n"),
        (
            0.90,
            r"\bwie viele "
            + PILLS
            + r"\b(?: \w+){0,5} (?:braucht|brauchte|brauchen|muss|reichen|reicht"
            r"|todlich|sterben|tot|aufwachen|aufzuwachen|aufhort|stehen bleibt|stehenbleibt)\b",
            "n",
        ),
        (
            0.90,
            r"\b(?:wie|womit) (?:\w+ ){0,2}(?:am besten|schmerzlos|sicher) (?:\w+ ){0,2}"
            r"(?:sterben|umbringen|tot)\b",
            "n",
        ),
        (
            0.75,
            r"\b(?:mache|mach) (?:ich )?(?!(?:\w+ )?(?:fruher|eher|fruh|pause|feierabend)\b)"
            r"(?:\w+ ){0,2}schluss\b(?! mit (?!allem|dem leben"
            r"|meinem leben)\w+| fur heute| mit der arbeit)",
            "s",
        ),
        (
            0.70,
            r"\b(?:bin|ware|sei) (?:ich )?(?:\w+ )?nicht mehr (?:da|hier|am leben|auf der welt)\b"
            r"(?!.*\b(?:urlaub|ferien|umzug|ziehe|zieh|reise|verreist|krank|arbeit|buro|schule"
            r"|uni|firma|team|gruppe|verein|chat|online|erreichbar)\b)",
            "n",
        ),
        (
            0.85,
            r"\b(?:einen|meinen|den) plan und (?:ein|mein|das|einen) (?:datum|termin|tag)\b(?! (?:fur"
            r"|zur|zum|der|des|von)\b)",
            "s",
        ),
        (
            0.80,
            r"\b(?:mein|meine|meinen) letzte[nr]? (?:tag|nachricht|abend|nacht)\b(?! (?:bei|in|im"
            r"|auf|an|am|als|fur|vor|hier)\b)(?!.*\b(?:arbeit|job|schule|buro|schicht|urlaub"
            r"|ferien|praktikum|semester|gute nacht|schlafen|bett|bis morgen|lol)\b)",
            "s",
        ),
        (
            0.55,
            r"\b(?:dann|bald|morgen|am \w+|heute nacht|heute|danach) ist (?:es|alles) vorbei\b"
            r"(?!.*\b(?:ferien|urlaub|prufung\w*|klausur\w*|stress|projekt|schule|semester"
            r"|arbeit|abgabe|wochenende|party)\b)",
            "s",
        ),
        (
            0.65,
            r"\b(?:soll|sollen|darf|durfen|kann|konnen) (?:ihn|sie|es|das|alles) (?:fur immer"
            r" )?behalten\b(?=.*\bbrauche (?:\w+ ){0,2}nicht mehr\b)",
            "s",
        ),
        (0.85, r"\bschluss mit (?:allem|dem leben|meinem leben)\b", "s"),
        (
            0.90,
            r"\b(?:mache|mach) (?:ich )?schluss\b(?: \|)? nicht mit (?:\w+ ){0,3}(?:\| )?mit (?:allem|dem leben|meinem leben)\b",
            "n",
        ),
        (0.50, r"\bich will nicht mehr(?=\s*$| \|)", "n"),
        (
            0.90,
            r"\b(?:will|mochte|wurde gern|wurde lieber|wunschte ich ware) (?:\w+ )?tot sein\b"
            r"|\bwunsche? mir (?:\w+ ){0,2}tot zu sein\b",
            "n",
        ),
        (0.45, r"\bhalte (?:es|das) (?:alles )?nicht mehr aus\b", "n"),
        (0.85, r"\b(?:denke|dachte|denk) (?:\w+ ){0,2}(?:an|uber) (?:selbstmord|suizid)\b", "s"),
        (0.75, r"\bnie (?:wieder|mehr) aufwachen\b", "n"),
        (0.70, r"\bspring(?:e)? (?:ich )?(?:jetzt|gleich|heute|morgen)\b", "s"),
        (0.85, r"\bbesser (?:dran )?ohne mich\b|\bohne mich besser\b", "n"),
        (0.75, r"\bohne mich (?:\w+ ){0,3}(?:besser|glucklicher|leichter|froher)\b", "n"),
        (0.55, r"\bnicht mehr (?:zu )?(?:existieren|da sein|da zu sein)\b", "n"),
        (
            0.45,
            r"\bsich (?:\w+ ){0,2}(?:umzubringen|umbringen|das leben (?:zu )?nehmen|zu toten)\b",
            "t",
        ),
        (0.60, r"\bmude vom leben\b|\blebensmude\b|\bdes lebens mude\b", ""),
        (0.45, r"\bwertlos\b|\bnichts wert\b", ""),
        (0.50, r"\b(?:nur )?eine last\b|\bbin (?:nur )?(?:eine )?last\b", ""),
        (
            0.55,
            r"\bwas hat (?:\w+ ){0,2}(?:noch )?(?:fur )?(?:einen )?sinn\b|\bhat (?:alles )?"
            r"keinen sinn mehr\b|\bwozu (?:noch )?(?:leben|weitermachen)\b",
            "n",
        ),
        (0.50, r"\b(?:sehe|seh) keine zukunft\b|\bkeine zukunft (?:mehr )?fur mich\b", "n"),
        (
            0.55,
            r"\b(?:niemand|keiner) (?:wurde|wird) (?:es |mich )?(?:merken|bemerken|vermissen)\b",
            "n",
        ),
        (
            0.60,
            r"\bwenn ich nicht mehr (?:da|hier|am leben) (?:ware|bin|waere)\b|\bnicht mehr da"
            r" (?:zu )?sein\b",
            "n",
        ),
        (
            0.45,
            r"^(?!.*\b(?:hochzeit|party|feier|wanderung|marathon|training|umzug)\b).*?"
            r"\b(?:ich )?kann (?:\w+ )?nicht mehr\b(?! (?:warten|schlafen|essen|sitzen"
            r"|stehen|laufen|lachen|aufhoren))",
            "n",
        ),
        (0.35, r"\bhoffnungslos\b|\bausweglos\b|\bkeinen ausweg\b", ""),
        (
            0.45,
            r"\b(?:fuhle mich|bin) (?:\w+ )?(?:hoffnungslos|verzweifelt|wertlos|nutzlos"
            r"|ausweglos)\b(?! (?:verliebt|romantisch|uberfordert|verloren|optimistisch|naiv"
            r"|verknallt|altmodisch))|\balles ist hoffnungslos\b",
            "",
        ),
        (0.35, r"\bich hasse mich\b|\bhasse mein leben\b", ""),
        (
            0.45,
            r"\bich hasse mich (?:\w+ )?(?:sehr|so sehr|selbst|abgrundtief)?(?=\s*$| \|)"
            r"|\bhasse mich (?:\w+ )?(?:so )?sehr\b(?! (?:dafur|fur|wenn|weil))"
            r"|\bhasse mein leben\b",
            "",
        ),
        (0.30, r"\b(?:innerlich )?leer\b|\bnichts (?:ist )?mehr wichtig\b", ""),
        (
            0.45,
            r"\bes wird (?:nie|niemals) besser\b|\bwird (?:nie|niemals) (?:mehr )?besser"
            r" (?:werden|fur mich)\b",
            "n",
        ),
        (0.35, r"\bvorbei\b", "s"),
        (0.30, r"\bdanke fur alles\b", ""),
        (
            0.30,
            r"\b(?:niemand|keiner|keinen) (?:interessiert|kummert|juckt) (?:sich )?(?:fur )?(?:mich"
            r"|es)\b",
            "n",
        ),
        (
            0.25,
            r"\b(?:mude von allem|alles satt|habe alles satt|ganz allein|allein auf der welt)\b",
            "",
        ),
        # preparation
        (0.85, r"\babschiedsbrief\w*\b", "st"),
        (
            0.85,
            r"\b(?:sachen|besitz|katze|hund|gitarre|schmuck|alles) (?:\w+ ){0,3}verschenkt\b"
            r"|\bverschenke (?:alle meine sachen|alles|meine sachen|meinen besitz|meine (?:katze"
            r"|hund|gitarre|tiere))\b(?!.*\b(?:umzug|ziehe|flohmarkt|ausmisten|neue\w*)\b)",
            "s",
        ),
        (0.30, r"\bverschenke (?:meine|alle)\b", "s"),
        (
            0.60,
            r"^(?!.*\b(?:gekauft|hauskauf|wohnungskauf|immobilie|heirat\w*|hochzeit|ehevertrag|baby"
            r"|schwanger|erste wohnung|erbschaft\w*|erbrecht)\b).*?\btestament\b",
            "f",
        ),
        (
            0.75,
            r"\b(?:von allen|von allen freunden|von meiner familie) verabschiedet\b"
            r"|\bmich (?:\w+ ){0,3}verabschiedet\b",
            "s",
        ),
        # means and method
        (
            0.85,
            r"\b(?:sammle|gesammelt|horte|gehortet|bunkere|gebunkert) (?:\w+ ){0,3}"
            + PILLS
            + r"\b|\b"
            + PILLS
            + r" (?:\w+ ){0,3}(?:gesammelt|gehortet|gebunkert)\b",
            "s",
        ),
        (
            0.80,
            r"\b(?:seil|strick) (?:\w+ ){0,2}gekauft\b(?!.*\b(?:kletter\w*|boot|segel\w*"
            r"|schaukel|abschlepp\w*|hund\w*|wasche|hangematte|zelt|garten|sport|turnhalle)\b)"
            r"(?<!zum klettern gekauft)",
            "s",
        ),
        (
            0.85,
            r"\b(?:von|vom) (?:der |dem |einer |einem )?" + _HIGH + r" (?:\w+ ){0,2}(?:zu )?"
            r"(?:springen|springe|spring|sturzen|runterspringen)\b",
            "t",
        ),
        (
            0.85,
            r"\bspring(?:e)? (?:ich )?(?:\w+ ){0,2}(?:von|vom) (?:der |dem |einer |einem )?"
            + _HIGH
            + r"\b",
            "s",
        ),
        (0.85, r"\btodliche[nr]? (?:dosis|dosen|menge)\b", "t"),
        (
            0.85,
            r"\bvor (?:den|einen|die|eine|das) (?:zug|ubahn|bahn|lkw|auto|bus|laster)"
            r" (?:zu )?(?:werfen|springen|laufen|legen|schmeissen)\b",
            "s",
        ),
        (
            0.85,
            r"\b(?:fahr|fahre|fahren|rasen|rase) (?:\w+ ){0,3}gegen (?:einen|den|eine|die)"
            r" (?:baum|wand|mauer|pfeiler|brucke)\b",
            "s",
        ),
        (0.90, r"\b(?:waffe|pistole|gewehr|messer)\b.*\bgegen mich\b", ""),
        (0.85, r"\bpulsadern\b", "s"),
    ],
    "self_harm": [
        (
            0.95,
            r"\bzu tief geschnitten\b|\b(?:blutung|blut|bluten) (?:\w+ ){0,3}(?:hort nicht auf"
            r"|stoppt nicht|nicht (?:mehr )?(?:auf|stoppen))\b|\buberall (?:ist )?blut\b"
            r"|\b(?:pulsadern|arme|arm|handgelenke|handgelenk) (?:\w+ ){0,2}aufgeschnitten\b"
            r"|\btief (?:geschnitten|geritzt)\b(?=.*\bblut)"
            r"|\bhort (?:\w+ )?nicht (?:mehr )?auf zu bluten\b|\bblutet (?:\w+ ){0,2}(?:stark"
            r"|immer noch|ohne ende|wie verruckt|so stark|total)\b(?=.*\b(?:geschnitten|geritzt"
            r"|aufgeschnitten|pulsadern|arm|arme|handgelenk\w*)\b)",
            "e",
        ),
        (
            0.95,
            r"\b(?:habe|hab) mich (?:\w+ ){0,3}(?:verbrannt|geschnitten|geritzt) (?:\w+ )"
            r"{0,3}(?:genaht|notaufnahme|krankenhaus)\b",
            "e",
        ),
        (
            0.85,
            r"\bmich " + _GAP + r"(?:ritzen|ritze|schneiden|verletzen|verbrennen"
            r"|bestrafen)\b|\b(?:ritze|schneide|verletze|verbrenne) mich\b",
            "f",
        ),
        (0.80, r"\britz(?:e|en|t)\b|\bgeritzt\b", "s"),
        (0.60, r"\bselbstverletz\w*\b|\bsvv\b", "t"),
    ],
    "violence_from_others": [
        (
            0.85,
            r"\b(?:zundet|zunden|zunde) (?:er|sie|die|der)? ?(?:\w+ ){0,3}(?:haus|wohnung|auto|laden) an"
            r" (?:wenn|falls)\b",
            "n",
        ),
        # a reported threat to kill ("wenn ich was sag bringt er mich um"; "der Stau
        # bringt mich um" stays an idiom: a threat needs "(hat gesagt,) wenn", "gedroht" or "ernst";
        # "gesagt" itself is a filler)
        (
            0.85,
            r"^(?=.*\b(?:hat (?:mir |uns )?(?:wenn|dass|falls)|gedroht|droht|drohte|ernst|angst|sagt|sagte"
            r"|meinte|geschworen|schwort)\b)(?!.*\b(?:zu spat|zimmer"
            r"|zeugnis|noten|hausaufgaben|aufraum\w*|handy|lol|haha\w*)\b).*?(?:\b(?:bringt|bringe"
            r"|bring|bringen) (?:er|sie|der|die|ihr) mich (?:\w+ ){0,2}um\b|\b(?:schlagt|schlag)"
            r" (?:er|sie) mich tot\b|\berschlagt (?:er|sie) mich\b|\b(?:er|sie) erschlagt mich\b"
            r"|\b(?:zundet|zunden|zunde) (?:er|sie|die)? ?(?:\w+ ){0,3}(?:haus|wohnung|auto|laden) an\b|\b(?:er|sie) (?:wird|wurde|will) mich (?:\w+ ){0,2}(?:umbringen"
            r"|toten|totschlagen|abstechen|erschiessen)\b|\bdann bin ich tot\b)",
            "n",
        ),
        (
            0.85,
            r"\b(?:er|sie|mein (?:mann|freund|vater|stiefvater|bruder|ex)|meine (?:frau"
            r"|freundin|mutter|stiefmutter)) (?:\w+ ){0,2}(?:schlagt|schlug|verprugelt"
            r"|wurgt|wurgte|tritt|vergewaltigt|missbraucht|bedroht) mich\b",
            "n",
        ),
        (
            0.80,
            r"\b(?:ich werde|ich wurde) (?:\w+ ){0,3}(?:geschlagen|verprugelt|vergewaltigt"
            r"|missbraucht|bedroht)\b",
            "n",
        ),
    ],
    "violence_to_others": [
        (
            0.85,
            r"\bich (?:will|werde) (?:\w+ ){0,3}(?:ihn|sie|jemanden|alle) (?:\w+ ){0,2}"
            r"(?:erstechen|erschiessen|umbringen|toten|abstechen)\b",
            "",
        ),
    ],
}

BOOSTERS: dict[str, list[tuple[float, str]]] = {
    "suicide": [
        (
            0.35,
            r"\b(?:heute nacht|heute abend|morgen|am wochenende|jetzt|gleich|bald|diese"
            r" woche|freitag)\b",
        ),
        (
            0.40,
            r"\b(?:geplant|plan|weiss genau wie|weiss (?:\w+ )?wofur|vorbereitet|termin|datum"
            r"|ausgesucht|steht fest|festgelegt|beschlossen)\b",
        ),
        (
            0.30,
            r"\b(?:nachste woche|nachsten \w+|am (?:montag|dienstag|mittwoch|donnerstag|freitag"
            r"|samstag|sonntag))\b",
        ),
        (0.35, r"\b(?:tabletten|seil|strick|waffe|pistole|brucke|zug)\b"),
        (0.30, r"\b(?:diesmal|meine es ernst)\b"),
        (0.45, r"\bbrauche (?:sie|das|ihn|es|die) (?:\w+ )?nicht mehr\b"),
    ],
    "self_harm": [
        (0.35, r"\b(?:wieder|tiefer|jeden tag|jede nacht|heute abend|heute nacht)\b"),
    ],
    "violence_from_others": [],
    "violence_to_others": [],
}

# Function words that tell the language of a message (see screen._languages).
# Dialect function words: the rules read "i mog nimma lebn" as German too
# (screen._languages); the learned layer's language (gloss.language) counts STOPWORDS only.
DIALECT = frozenset(
    {
        "mog",
        "nimma",
        "nimmer",
        "ned",
        "hob",
        "hot",
        "ick",
        "nich",
        "dit",
        "wos",
        "mei",
        "koa",
        "ois",
        "scho",
        "uff",
        "keen",
        "wui",
        "isch",
        "nume",
        "mi",
        "wennst",
        "ka",  # not "des", "net": French
    }
)

STOPWORDS = frozenset(
    {
        "ich",
        "nicht",
        "und",
        "der",
        "die",
        "das",
        "ist",
        "mich",
        "mir",
        "mein",
        "meine",
        "meinen",
        "ein",
        "eine",
        "einen",
        "zu",
        "auf",
        "mit",
        "es",
        "bin",
        "habe",
        "hab",
        "wie",
        "was",
        "wenn",
        "noch",
        "mehr",
        "er",
        "den",
        "dem",
        "von",
        "vor",
        "sich",
        "auch",
        "schon",
        "nur",
        "aber",
        "oder",
        "dass",
        "weil",
        "keine",
        "kein",
        "nie",
        "will",
        "werde",
        "wurde",
        "gerade",
        "grad",
        "heute",
        "morgen",
        "alle",
        "alles",
        "ganz",
        "sehr",
        "mal",
        "jetzt",
        "hier",
        "einfach",
        "bei",
    }
)
