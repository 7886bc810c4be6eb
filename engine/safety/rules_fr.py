"""French rule tables for the risk screen (data only; the logic is in ``screen.py``).

Patterns run over the light normal form (``screen.normalise_light``): lower case, accents
folded (é -> e, ç -> c), elisions written out ("j'ai" -> "je ai", "l'eau" -> "le eau",
"qu'elle" -> "que elle"), punctuation as a clause boundary ``|``. Rows are
``(weight, regex, flags)`` with the flags documented in ``screen.py``.
"""

from __future__ import annotations

import re

LANG = "fr"

_NEG = r"(?:ne|pas|jamais|aucun|aucune|non|plus)"
_GAP = r"(?:(?!(?:pas|jamais)\b)\w+ ){0,3}"
PILLS = (
    r"(?:cachets|comprimes|medicaments|medocs|pilules|somniferes|antidepresseurs"
    r"|anxiolytiques|paracetamol|doliprane|ibuprofene|insuline|xanax|lexomil|tramadol"
    r"|calmants)"
)
_MANY = (
    r"(?:tous|toutes|toute|boite|boites|plaquette|plaquettes|flacon|tube|poignee|trop de"
    r"|\d{2,})"
)
_HIGH = (
    r"(?:pont|toit|falaise|balcon|rebord|bord|rails|voie|quai|immeuble|tour|parking"
    r"|fenetre|viaduc|precipice)"
)

MEDICINE_WORD = "medicaments"  # a medicine name from assets/safety/medicines.txt reads as this

ELISIONS: list[tuple[str, str]] = [
    (r"\bj'", "je "),
    (r"\bm'", "me "),
    (r"\bt'", "te "),
    (r"\bs'", "se "),
    (r"\bl'", "le "),
    (r"\bn'", "ne "),
    (r"\bd'", "de "),
    (r"\bqu'", "que "),
    (r"\bc'", "ce "),
    (r"\bjusqu'", "jusque "),
]

# Chat spellings and common misspellings -> canonical words.
TOKEN_MAP: dict[str, str] = {
    "jveux": "je veux",
    "jvais": "je vais",
    "jsuis": "je suis",
    "chui": "je suis",
    "chuis": "je suis",
    "jai": "je ai",
    "jme": "je me",
    "jpeux": "je peux",
    "jpense": "je pense",
    "jsais": "je sais",
    "jvoudrais": "je voudrais",
    "jen": "je en",
    "ya": "il y a",
    "pk": "pourquoi",
    "pcq": "parce que",
    "tt": "tout",
    "ts": "tous",
    "bcp": "beaucoup",
    "mourrir": "mourir",
    "mourire": "mourir",
    "suicidé": "suicide",
    "sucider": "suicider",
    "suicder": "suicider",
    "medocs": "medicaments",
    "medoc": "medicaments",
    "cachet": "cachets",
    "comprime": "comprimes",
    "pillules": "pilules",
    "veu": "veux",
    "veus": "veux",
    "tuee": "tue",
    "tuer": "tuer",
    "jsaute": "je saute",
    "jvai": "je vais",
    "vai": "vais",
    "overdos": "overdose",
    "sotter": "sauter",
    "sote": "saute",
    "medics": "medicaments",
    "cachetons": "cachets",
}
# Words matched with edit distance <= 1 (all >= 6 letters).
FUZZY_WORDS = (
    "suicider",
    "suicidaire",
    "medicaments",
    "somniferes",
    "comprimes",
    "testament",
    "desespere",
    "desesperee",
    "scarifier",
    "scarifie",
    "scarifiee",
    "scarifies",
    "paracetamol",
    "suicide",
    "suicides",
)
PHRASE_MAP: list[tuple[str, str]] = [
    (r"\bfoutre en le air\b", "foutre en l air"),
    (r"\bmoi meme\b", "moi"),
]
FILLERS = frozenset(
    {
        "vraiment",
        "juste",
        "franchement",
        "carrement",
        "grave",
        "genre",
        "tellement",
        "simplement",
        "sincerement",
        "limite",
        "bref",
        "hein",
    }
)
HYPERBOLE = re.compile(
    r"\b(?:mdr+|ptdr+|lol+|xd|haha\w*|jpp|je rigole|je plaisante"
    r"|pour rire)\b"
)
SERIOUS = re.compile(
    r"\b(?:serieux|serieuse|pas une blague|je rigole pas|sans rire"
    r"|je suis serieux|je suis serieuse)\b"
)
# a method joke about an everyday annoyance (see rules_en.JOKE_METHOD)
JOKE_METHOD = re.compile(
    r"\b(?:(?:je )?me (?:jette|jeter|pends|pendre|flingue|flinguer"
    r"|tire une balle|tirer une balle)"
    r"|(?:je )?saute(?:r)? (?:par|du|de la|d un|sous))\b"
)
JOKE_TRIVIAL = re.compile(
    r"\b(?:reunions?|visio\w*|teams|zoom|appels?|cours|amphi|lundis?"
    r"|bouchons?|embouteillages?|wifi|internet"
    r"|imprimante|ordi|chargeur|pubs?|chanson|musique|serie|episode|boss"
    r"|ikea|mariage|soiree|belle mere|belle famille|voisins?|voisines?"
    r"|file d attente|service client|impots|paperasse|mails?"
    r"|presentation|clients?|clientes?|demarchage|fibre|box|karaoke|supermarche|magasin"
    r"|radio|cles|code|bug|dossiers|copies|match|foot)\b"
)
JOKE_IF = re.compile(r"\b(?:si|encore une fois|encore un|encore une|une fois de plus|plutot)\b")


# A denial in the user's own words ("je veux pas mourir"): read by screen.denied.
DENIAL = re.compile(
    r"\b(?:je )?(?:ne )?(?:veux|vais|voudrais|compte) pas (?:mourir|me tuer|me suicider|en finir)\b"
    r"|\bje (?:ne )?suis pas suicidaire\b"
)

# An explicit harmless purpose ("comme le médecin m'a dit", "pour accrocher le rideau"): when the
# rules see no risk, the learned layer may not raise such a message past concern (learned.py).
PURPOSE = re.compile(
    r"\bcomme (?:prescrit|indique|le (?:doc|docteur|medecin) (?:me a )?(?:dit|prescrit))\b"
    r"|\b(?:doc|docteur|medecin|generaliste|pharmacien\w*) (?:me a |ma )?(?:prescrit|conseille)\b"
    r"|\bpour (?:accrocher|changer|tendre|fixer|installer|poser|attacher|suspendre) (?:la |le |les |l |une |un |mes |ma |mon )?"
    r"(?:\w+ )?(?:ampoules?|lampes?|rideaux?|corde a linge|linge|etageres?|tableaux?|guirlandes?|balancoire|hamac|bache"
    r"|lustre)\b"
    r"|\b(?:corde|cordes|cordelette|sangle)s? (?:\w+ )?pour (?:la |le |les |ma |mon |une |un )?(?:tente|camping|bivouac|rando\w*"
    r"|bateau|voilier|hamac|bache|demenagement|escalade|galerie)\b"
    r"|\b(?:tout (?:tuer|dechirer|casser)|tuer sur scene)\b"
    r"|\bme (?:pendre|pends|pend|pendrai|pendrais) (?:a (?:ton|son|votre|leur) cou|au cou)\b"  # to hug
    r"|\b(?:voiture|moteur|bagnole|char)\b.{0,30}\b(?:demarre (?:pas|plus)|veut (?:pas|plus) demarrer)\b"
)

FIRST = frozenset({"je", "me", "moi", "mon", "ma", "mes", "nous"})
THIRD = frozenset(
    {
        "il",
        "elle",
        "ils",
        "elles",
        "lui",
        "son",
        "sa",
        "ses",
        "leur",
        "leurs",
        "on",
        "ami",
        "amie",
        "pote",
        "copain",
        "copine",
        "frere",
        "soeur",
        "mere",
        "pere",
        "maman",
        "papa",
        "fils",
        "fille",
        "chef",
        "collegue",
        "prof",
        "personnage",
        "heros",
        "heroine",
        "mechant",
        "victime",
        "roman",
        "film",
        "livre",
        "serie",
        "episode",
        "article",
        "infos",
        "polar",
        "documentaire",
        "jeu",
        "chanson",
        "auteur",
        "quelqu",
        "quelqu un",
        "personne",
        "bovary",
        "camus",
        "werther",
        "femme",
        "homme",
        "vieille",
        "vieux",
        "narrateur",
        "narratrice",
        "nouvelle",
    }
)
MEDIA = re.compile(
    r"\b(?:roman\w*|livre|livres|film\w*|serie|episode|saison|personnage|heros"
    r"|article|infos|journal|documentaire|polar|podcast|memoire|expose|cours"
    r"|philo|classe|etude|statistique\w*|taux|prevention|histoire|poeme|theatre"
    r"|piece|jeu|benevole|bovary|camus|werther|socio\w*|durkheim|formation|infirmi\w*"
    r"|ecriture|narrat\w*|recit|scenario|nouvelle)\b"
)
# A negation inside a condition ("si je réussis pas le bac je me tue") does not negate the main
# clause that follows it.
NEGATION_TAIL = re.compile(
    r"^(?!.*\b(?:si|quand|lorsque)\b.*\b(?:ne|pas|jamais|aucun|aucune|non)\b)"
    r".*\b(?:ne|pas|jamais|aucun|aucune|non)\b(?: (?!(?:pourquoi|si|mais|comment|quand|parce|que"
    r"|et|ou|plus)\b)[a-z]+){0,3} $"
)
REPORTED_TAIL = re.compile(
    r"\b(?:dit|disent|disait|ecrit) (?:que )?(?:je devrais|de)(?: \w+){0,2} $"
)
PAST = re.compile(
    r"\b(?:avant(?! (?:de|que|le|la|les|ce|cette|mon|ma|mes|midi|demain|la fin|noel"
    r"|samedi|dimanche|lundi|mardi|mercredi|jeudi|vendredi)\b)|quand je etais (?:petit|petite|ado|jeune|enfant)|il y a des annees"
    r"|autrefois|a le epoque)\b"
)
NOT_PAST = re.compile(
    r"\b(?:maintenant|encore|toujours|aujourde hui|ce soir|en ce moment"
    r"|ces temps ci|depuis peu)\b"
)

IDIOMS = [
    r"\bme noyer (?:sous|dans) (?:les |mes |le |la |du |des |un )?(?:dossiers|copies|mails|boulot|travail|taf"
    r"|paperasse|devoirs|factures|cafe|linge|cartons|lessive|revisions|verre)\b",
    # "c'est du suicide financier", "dire ça à son patron, c'est suicidaire": a choice called suicide
    r"\bce (?:est|etait|serait|sera) (?:\w+ ){0,2}(?:du suicide|suicidaire)\b",
    r"\bsuicide (?:financier|social|professionnel|commercial|politique|electoral)\b",
    # "ces devoirs vont me tuer", "cette chaleur va me tuer": a thing as the subject
    r"\b(?:chaleur|devoirs?|boulot|travail|exams?|examens?|cours|bruit|attente|suspense|trajet"
    r"|reunions?|lundi|maths|dissert\w*|partiels?|canicule|froid|embouteillages?|bouchons?"
    r"|revisions?|taf|stress) (?:\w+ ){0,3}(?:va|vont|me) (?:me )?(?:tuer|tue|achever)\b",
    r"\bme (?:pendre|pends|pend|pendrai|pendrais) (?:a (?:ton|son|votre|leur) cou|au cou)\b",
    r"\b(?:me|te|se|nous|vous) (?:tirer|tire|tirerai|tirerais|tirais|suis tire|suis tiree) une balle dans le pied\b",
    # "une overdose de séries" (too much of something harmless)
    r"\b(?:overdose|od|surdose) de (?:series?|chocolat|sucre|travail|boulot|taf|netflix|cafe|films?|jeux?"
    r"|reunions?|bonbons?|gateaux?|pizzas?|soleil|sport|musique|mails|infos|cours|revisions?|devoirs|tiktok"
    r"|reseaux|insta\w*|youtube|animes?|mangas?|romans?|livres?|bouffe|nourriture|amour|calins|noel|fete)\b",
    r"\b(?:mort|morte|morts|mortes|meurs|meurt|mourir|mourais|crever|creve|crevee) (?:de|d)"
    r" (?:rire|fatigue|faim|soif|froid|chaud|honte|ennui|peur|envie|curiosite|trouille|vieillesse)\b",
    r"\b(?:ennuie|ennuyer|ennuyais) a mourir\b",
    r"\b(?:je suis|chui|suis) (?:mort|morte)(?= \||$| mdr| ptdr| lol)",
    r"\bmdr je suis (?:mort|morte)\b",
    r"\b(?:telephone|portable|batterie|ordi|ordinateur|voiture|plante|plantes) (?:est |sont )?"
    r"(?:mort|morte|morts|mortes|creve|crevee)\b",
    r"\b(?:tuerais|tuerait) pour\b",
    r"\b(?:va|vont|vais|allait|allaient|veut|voulait) me (?:tuer|massacrer|buter|achever)"
    r" (?:quand|si|lorsque|parce)\b",
    r"\bme tue (?:a|au) (?:la tache|le travail|travail|te le dire|le dire|expliquer)\b",
    r"\b(?:tu|vous) me tue(?:s|z)?\b",
    r"\b(?:tue|tues|tuer) (?:le|la|les) (?:processus|temps|moustique\w*|mouches?|ambiance)\b",
    r"\ba couper le souffle\b",
    r"\bme (?:a|as|ont) (?:tue|tuee|acheve|achevee)\b",
]

RULES: dict[str, list[tuple[float, str, str]]] = {
    "suicide": [
        # "passer à l'acte" (to act on it), unless it is acting on something else
        (
            0.85,
            r"\b(?:envie de|vais|veux|voudrais|prete? a|decidee? a|decidee? de|peur de|ose|oser|me retiens de"
            r"|failli|sur le point de) (?:\w+ ){0,2}passer a le acte\b(?! (?:et|pour|avec|sur|de|du|des|en)\b)"
            r"|\bje (?:passe|passerai|vais passer) a le acte\b(?! (?:et|pour|avec|sur|de|du|des|en)\b)",
            "s",
        ),
        # a weapon loaded and at hand, a blade on the skin, legs over a drop, now
        (
            0.95,
            r"^(?=.*(?<!pas )\b(?:charge|chargee|arme|armee|securite enlevee|sans la securite)\b)(?=.*\b(?:devant"
            r" moi|a cote de moi|dans la main|dans ma main|dans la bouche|dans ma bouche|sur la tempe"
            r"|sur ma tempe|sur mes genoux|sur la table|contre ma tete|sous le menton)\b)(?!.*\b(?:stand"
            r"|tir sportif|chasse|chasseur|club|film|jeu|serie|roman|musee|scene|nettoy\w*)\b).*?"
            r"\b(?:flingue|pistolet|fusil|revolver|calibre|arme de service|carabine)\b",
            "e",
        ),
        (
            0.95,
            r"\b(?:couteau|lame|cutter|rasoir) (?:\w+ ){0,3}(?:sur|contre) (?:mon |ma |mes |la |le"
            r" |les )?(?:poignet\w*|peau|gorge|bras|veine\w*|cou)\b(?!.*\b(?:cuisine|legumes"
            r"|oignon\w*|cuisiner|epluch\w*)\b)",
            "e",
        ),
        (
            0.95,
            r"^(?=.*\b(?:etage|toit|fenetre|pont|balcon|rambarde|falaise|garde corps|immeuble"
            r"|parapet)\b)(?!.*\b(?:piscine|ponton|bateau|balancoire|hamac|photo\w*|selfie|coucher"
            r" de soleil|vue|pique nique|soleil|bronz\w*|clope|cigarette|biere)\b).*?\b(?:jambes|pieds) (?:\w+ ){0,2}(?:dans le vide|dehors"
            r"|par dessus (?:la|le) (?:rambarde|garde corps|parapet|bord))\b",
            "e",
        ),
        (
            0.85,
            r"\b(?:poison|mort aux rats|javel|antigel|destop|desherbant)\b.*\b(?:je vais|vais|je compte)"
            r" (?:le |la |les |en )?(?:prendre|boire|avaler)\b(?!.*\bpour (?:le |la |les |l )?(?:jardin|potager"
            r"|pelouse|allee|mauvaises herbes|cave|grenier|cuisine|sol|evier|toilettes|wc|piscine|linge"
            r"|terrasse|souris|rats)\b)",
            "s",
        ),
        # overdose said in three words, pain, "not miss it"
        (
            0.85,
            r"\bje ai tout avale(?= *(?:\||$))|\bje les ai (?:tous|toutes) (?:pris|prises"
            r"|avales|avalees)\b",
            "f",
        ),
        (
            0.85,
            r"\b(?:est ce que )?(?:ca|ce) fait mal(?: \|)? (?:de )?(?:se noyer|se pendre|se vider de"
            r" son sang|sauter)\b",
            "n",
        ),
        (0.85, r"\bje (?:ne )?veux pas me (?:louper|rater)(?: cette fois)?(?= *(?:\||$))", "n"),
        (
            0.80,
            r"\b(?:pour que|que) (?:ca|ce|ma mort) (?:ait|ai|aie) (?:le )?(?:air|l air) (?:de|d)"
            r" (?:un )?(?:accident|crise cardiaque)\b|\bressemble a un accident\b",
            "n",
        ),
        # lethality and access questions, means asked for evasively, calm preparation
        (
            0.85,
            r"\b(?:est ce que )?on survit (?:a |au )?(?:une chute|un saut|\d+|du \d+|ca)\b",
            "t",
        ),
        (
            0.85,
            r"\b(?:corde|cable|helium|charbon|cachets|comprimes|fusil|pistolet|munitions|balles"
            r"|lames?)\b.*\b(?:demande pas pourquoi|pose pas de questions?|pas pour (?:les |des )?"
            r"(?:ballons|barbecue|la vue|escalade|la fete))\b",
            "n",
        ),
        (
            0.85,
            r"\b(?:lettres?|mots?|mails?|messages?|videos?)\b.*(?:^|\| )pour (?:apres|quand je"
            r" serai (?:parti|partie))(?= *(?:\||$))",
            "n",
        ),
        (
            0.85,
            r"\b(?:personne|aucun de eux|aucune de elles) (?:ne )?(?:sait|sais)(?: \|)?"
            r" que (?:ce|ca) (?:etait|est|sera) la derniere fois\b",
            "n",
        ),
        # families of risk the rules missed in all three languages:
        # goodbye messages other than letters; a last time kept secret; "you'll know why"
        (
            0.85,
            r"^(?!.*\b(?:collegues?|boulot|travail|taf|retraite|demenag\w*|etranger|equipe|classe|eleves"
            r"|pot de depart|club|erasmus|stage|bureau|patron|entraineur|prof|nouvelle|histoire|roman|personnage"
            r"|narrat\w*|maitresse|maitre|ecole|on a fait|nous avons)\b).*?\b(?:vocaux|vocal"
            r"|messages?|videos?|mails?|textos?|sms|enregistrements?) de adieu\b",
            "s",
        ),
        (
            0.85,
            r"\b(?:une )?derniere fois(?: \|)? (?:\w+ ){0,2}sans (?:leur|lui|le|la|les) dire\b"
            r"|\bpour moi ce (?:etait|sera|est) la derniere fois\b"
            r"|\b(?:ils|elle|il|elles) (?:ne )?(?:savent|sait) pas que ce (?:etait|est|sera) la derniere"
            r" fois\b(?!.*\b(?:demenag\w*|etranger|saison|club|equipe|boulot)\b)",
            "n",
        ),
        (
            0.80,
            r"\bsi je (?:ne )?suis (?:plus|pas) (?:\w+ )?(?:connecte|connectee|la|en ligne) (?:\w+ ){0,2}"
            r"(?:tu sauras|vous saurez) pourquoi\b(?!.*\b(?:match|jeu|game|serveur|wifi|batterie|reseau|partiel"
            r"|exam\w*|boulot|taf|forfait)\b)",
            "n",
        ),
        (
            0.85,
            r"\bplus (?:un|une) (?:probleme|fardeau|poids|charge) pour (?:personne|vous|eux|toi)\b"
            r"(?=.*\b(?:organise|prevu|prepare|dans une semaine|bientot|demain|decide)\b)",
            "n",
        ),
        (
            0.85,
            r"^(?=.*\b(?:range|notaire|codes?|resilie|lettre|explique|fille|fils|enfants?|adieu)\b)(?!.*\b(?:demenag\w*|etranger|canada"
            r"|australie|expat\w*|quebec|mutation|erasmus)\b).*?\b(?:partir|pars|part|parte) pour (?:de bon|toujours)\b",
            "s",
        ),
        (
            0.85,
            r"\b(?:"
            + PILLS[3:-1]
            + r"|boites?)\b.*\b(?:dormir|endormir) pour (?:de bon|toujours)\b",
            "n",
        ),
        # lethality: "so they think it was a heart attack"; "without failing"; "without pain"
        (
            0.85,
            r"\b(?:croira|croiront|pensera|penseront|croire|penser|dira|diront) (?:a|que ce est|que ce"
            r" etait|que) (?:\w+ ){0,2}(?:accident|crise cardiaque|mort naturelle)\b(?=.*\b(?:je|me|mon|ma"
            r"|mes)\b)",
            "t",
        ),
        (
            0.90,
            r"\b(?:on|je) (?:ne )?se rate pas\b|\b(?:sans|pour (?:ne )?pas) (?:me|se) rater\b",
            "n",
        ),
        (
            0.90,
            r"\b(?:chercher|cherche|regarde|regarder) comment (?:le faire|faire|en finir|mourir) sans"
            r" (?:souffrir|avoir mal|douleur)\b",
            "n",
        ),
        (
            0.85,
            r"\b(?:en sautant|si on saute|si je saute|quand on saute) (?:\w+ ){0,6}(?:\| )?(?:on meurt|meurt on"
            r"|je meurs|on est mort)\b",
            "t",
        ),
        # scouting: not for the view, a roof door never locked, freight trains, a spot picked out
        (
            0.85,
            r"^(?=.*\b(?:"
            + _HIGH[3:-1]
            + r"|viaduc|carriere|defense)\b).*?\b(?:ce est |ce etait )?pas pour"
            r" (?:la vue|les photos|le paysage|admirer)\b",
            "n",
        ),
        (
            0.80,
            r"\b(?:porte|acces|trappe) (?:du|de le|au|a le) toit (?:\w+ ){0,4}(?:jamais|pas) (?:\w+ )?"
            r"(?:fermee|verrouillee)\b(?=.*\b(?:etages?|monte|en bas|bord|haut)\b)(?!.*\b(?:barbecue\w*"
            r"|apero|fete|bronzer|fumer|clope|syndic|securite|cambriol\w*|on y monte|nous)\b)",
            "s",
        ),
        (
            0.85,
            r"^(?=.*\b(?:horaires?|heure|regarde|appli|passage a niveau|grillage|sais|cette nuit)\b)"
            r"(?!.*\b(?:retard|correspondance|rate|photos?|maquette|bruit|dormir|reveille)\b).*?(?:\b(?:trains?"
            r" de marchandises|tgv|trains?)\b(?: (?:\w+|\|)){0,14} (?:ralenti\w* pas|sans ralentir|sans se arreter"
            r"|se arrete pas|ne se arrete pas|a fond)\b|\btrains? de marchandises\b.*\bgrillage (?:est )?(?:casse"
            r"|coupe|ouvert|troue|abime)\b)",
            "s",
        ),
        (
            0.80,
            r"\b(?:je ai )?repere (?:un|le|la|une|le) (?:pont|endroit|falaise|toit|viaduc|immeuble|voie"
            r"|carriere)\b(?!.*\b(?:photos?|balade|pique nique|vue|rando\w*|velo|resto|restaurant|concert"
            r"|vacances|apero)\b)",
            "s",
        ),
        (
            0.85,
            r"\bmon plan ce est (?:la|le|de) (?:\w+ ){0,3}(?:carriere|pont|falaise|voie|toit|viaduc"
            r"|train|corde|cachets|medicaments)\b",
            "n",
        ),
        (
            0.85,
            r"^(?=.*\b(?:etages?|toit|terrasse|pont|falaise|grillage|balcon|garde corps)\b)(?!.*\b(?:piscine"
            r"|lac|plage|quai|photos?)\b).*?\bme approche (?:\w+ ){0,3}(?:du|de le) (?:bord|vide|rebord)\b",
            "s",
        ),
        (
            0.85,
            r"\b(?:arme|pistolet|fusil|flingue|revolver)\b.*\bje y pense (?:tous les soirs|tout le temps"
            r"|chaque (?:soir|jour|nuit)|tous les jours)\b",
            "n",
        ),
        (
            0.85,
            r"\b(?:testament|dernieres volontes)\b.*\b(?:servira bientot|bientot utile|garder le secret"
            r"|personne ne doit savoir)\b",
            "n",
        ),
        (
            0.95,
            r"\b(?:adieu|au revoir)\b.*\b(?:est|suis) (?:gare |garee |assis |assise |debout )?sur (?:le|la)"
            r" (?:pont|viaduc|toit|falaise|rebord|parapet)\b",
            "e",
        ),
        (
            0.95,
            r"^(?=.*\b(?:pris|avale|cachets|medicaments|pilules|ecstas?|drogue\w*)\b).*?\b(?:il|elle)"
            r" (?:convulse|fait des convulsions|ne respire (?:plus|presque plus)|respire (?:plus|mal))\b",
            "e",
        ),
        (
            0.95,
            r"^(?=.*\b(?:glacee|froide|continue|avance\w*|habille\w*)\b)(?!.*\b(?:baignade|nager|nage"
            r"|vacances|enfants|combinaison|ballon|mdr|lol)\b).*?\b(?:suis|je suis) dans (?:la mer|le lac"
            r"|la riviere|le fleuve|le eau|la loire|la seine) jusque a (?:la |aux |au |le )?(?:taille|epaules"
            r"|poitrine|cou)\b",
            "e",
        ),
        (
            0.90,
            r"\bcomme si ce (?:etait|est) la derniere fois\b(?: \|)? (?:parce que|car) (?:ca|ce) (?:le )?est\b",
            "n",
        ),
        (
            0.95,
            r"\b(?:je viens de|jviens de|viens de|je ai|ai) (?:me )?(?:injecter|injecte|fait) (?:\w+ ){0,2}(?:toute|tout"
            r"|tous|toutes) (?:le |la |les |mon |ma |mes )?(?:insuline|stylos?|doses?)\b",
            "e",
        ),
        # cars and water
        (
            0.85,
            r"^(?!.*\b(?:un conducteur|le conducteur|un mec|un type|le chauffeur|un camion a|accident"
            r" de|reve)\b).*?\b(?:foncer|foncerai|lancer|la lancer|jeter|envoyer|planter|encastrer)"
            r" (?:\w+ ){0,3}(?:dans|contre) (?:un|une|le|la) (?:\w+ )?(?:platane|arbre|mur|pile|pilier"
            r"|camion|poids lourd|glissiere)\b",
            "s",
        ),
        (
            0.95,
            r"^(?!.*\b(?:baignade|nager|nage|natation|vacances|enfants|combinaison|chien|plage avec"
            r"|bain de minuit|ballon|recuperer|drole|mdr|lol|pari|defi|pour rire|fete)\b)(?=.*\b(?:habille\w*|glacee|froide|meme endroit|noye\w*)\b).*?(?:\b(?:rentre"
            r"|entre|entree|rentree|marche|avance|avancee) (?:\w+ ){0,2}dans (?:la mer|le lac|la riviere"
            r"|la loire|la seine|le fleuve|le eau|le rhone|la garonne)\b|\b(?:le |de le )?eau (?:me arrive"
            r"|jusque a) (?:a la |aux |au |a le |la |le |les )?(?:taille|epaules|poitrine|cou|menton)\b)",
            "e",
        ),
        # behaviour in progress
        (
            0.95,
            r"\b(?:je ai|je viens de|ai) (?:\w+ ){0,4}(?:avale|pris|prendre|avaler|bu|boire)"
            r" (?:\w+ ){0,3}" + _MANY + r" (?:\w+ ){0,4}" + PILLS + r"\b",
            "e",
        ),
        (
            0.95,
            r"\b(?:je ai|je viens de|ai) (?:\w+ ){0,4}(?:avale|pris|prendre|avaler) (?:\w+ )"
            r"{0,3}(?:\d+ )?" + PILLS + r"\b(?=.*\b(?:" + _MANY + r"|flou|dormir|sommeil"
            r"|adieu|personne|trop)\b)",
            "e",
        ),
        (
            0.95,
            r"\b(?:je ai|je viens de|ai) (?:\w+ ){0,3}(?:bu|avale|boire|avaler) (?:\w+ ){0,3}"
            r"(?:eau de javel|javel|poison|mort aux rats|antigel|destop|produit menager)\b",
            "e",
        ),
        (
            0.95,
            r"\b(?:elle|il|amie|ami|frere|soeur|mere|pere|fils|fille) (?:\w+ ){0,3}(?:a|ont)"
            r" (?:\w+ ){0,2}(?:avale|pris) (?:\w+ ){0,2}"
            + _MANY
            + r" (?:\w+ ){0,3}"
            + PILLS
            + r"\b",
            "e",
        ),
        (0.95, r"\b(?:je ai fait|fait|je ai pris|pris) une (?:overdose|od|surdose)\b", "e"),
        (0.95, r"\bje ai saute\b(?=.*\b(?:jambes|bouger|sang|dos|mal)\b)", "e"),
        (
            0.95,
            r"\b(?:je suis|suis|je me tiens|assis|assise|debout) (?:\w+ ){0,3}(?:sur|au bord"
            r" de|au bord du|en haut de|en haut du|au dessus de|au dessus du) (?:le |la |les |un"
            r" |une |de le )?" + _HIGH + r"\b(?=.*\b(?:sauter|saute|sauterai|tomber|train|attends"
            r"|en ce moment|maintenant|la maintenant|haut|vide|fin|adieu)\b)(?!.*\b(?:retard|photos?"
            r"|vue|coucher de soleil|selfie|repar\w*|antenne|bateau|attends (?:mon|ma|mes|un|une"
            r"|le bus))\b)",
            "e",
        ),
        (
            0.95,
            r"\b(?:je suis|suis|debout|assise?|allongee?|couchee?) (?:\w+ ){0,2}(?:sur|entre)"
            r" (?:les |la )?(?:rails|voies|voie ferree)\b(?!.*\b(?:photos?|maquette|train"
            r" electrique|travail|chantier)\b)|\b(?:je suis|suis|debout|assise?) (?:\w+ ){0,2}"
            r"(?:au bord|sur le rebord|de le autre cote de la rambarde|de le autre cote de le"
            r" garde fou) (?:de le |du |de la |de un |de une )?(?:\w+ )?(?:pont|toit|immeuble"
            r"|parking|viaduc|falaise|balcon|fenetre|vide|precipice)\b(?!.*\b(?:photos?|vue"
            r"|coucher de soleil|selfie|rando\w*|balade|vacances|magnifique|belle)\b)",
            "e",
        ),
        (
            0.95,
            r"\b(?:corde|noeud) (?:\w+ ){0,2}(?:est )?(?:accrochee|attachee|prete|autour de mon"
            r" cou)\b",
            "e",
        ),
        (0.95, r"\bmoteur (?:\w+ ){0,3}(?:tourne|allume)\b(?=.*\bgarage\b)", "e"),
        # exhaust or charcoal in a closed space, a noose and something to stand on: in any order
        (
            0.95,
            r"^(?=.*\bgarage\b)(?!.*\b(?:demarre pas|panne|garagiste|repar\w*)\b).*?\bmoteur"
            r" (?:\w+ ){0,2}(?:tourne|allume)\b",
            "e",
        ),
        (
            0.95,
            r"^(?=.*\b(?:barbecue|charbon|braises?)\b)(?=.*\b(?:allume|allumee|brule)\b).*?"
            r"\b(?:calfeutre\w*|scotche\w*|colmate\w*|bouche les)\b",
            "e",
        ),
        (
            0.95,
            r"^(?=.*\b(?:corde|noeud coulant)\b)(?!.*\b(?:ampoule|lampe|rideau|etagere|escalade"
            r"|balancoire|bache|linge|tente|bateau|voilier)\b).*?\b(?:je suis|suis|debout|monte|montee) (?:\w+ ){0,2}sur (?:la |le |une |un"
            r" |mon |ma )?(?:chaise|tabouret|escabeau|echelle)\b",
            "e",
        ),
        # explicit
        # "me tuer" after a third person's verb is someone else's act ("ce dossier va me tuer": an
        # idiom; "il va me tuer": a threat, violence_from_others below)
        (
            0.95,
            r"(?<!\bva )(?<!\bvont )(?<!\ballait )(?<!\ballaient )(?<!\bveut )(?<!\bvoulait )"
            r"(?<!\bveulent )\bme (?!(?:\w+ ){0,2}(?:fait|faite|faire|fais) (?:tuer|buter|flinguer)\b)"  # got killed
            + _GAP
            + r"(?:suicider|tuer|pendre|foutre en l air|jeter (?:sous|de le"
            r"|du|dans|par)|noyer|empoisonner|flinguer|buter|tirer une balle)\b",
            "f",
        ),
        (
            0.95,
            r"\bje me (?:tue|suicide|pends|jette|flingue|bute|suiciderai|tuerai)\b(?! (?:a le"
            r" eau|dans la piscine|dans la mer|a la tache|au travail|a le ouvrage|sur|dans la"
            r" bataille|dans le travail|dans le boulot|dans mes|dans les bras|dans la gueule|a"
            r" corps|a le assaut|a la poursuite))",
            "",
        ),
        (
            0.95,
            r"\b(?:je me tire|me tirer|je vais me tirer) une balle\b|\bune balle dans la tete\b",
            "",
        ),
        (
            0.85,
            r"\b(?:je )?(?:saute|sauterai|sauterais|vais sauter|me jette|me jetterai|vais me jeter"
            r"|me jeter|jette moi) (?:\w+ )?(?:de le |du |de la |de un |de une |de mon |de ma |par la"
            r" |depuis mon |depuis ma |depuis le"
            r" |depuis la |depuis )" + _HIGH + r"\b|\b(?:je )?(?:me jette|me jetterai|vais me"
            r" jeter|me jeter) par la fenetre\b",
            "t",
        ),
        (0.85, r"\b(?:un|mon) plan et (?:une|la|ma) date\b(?! (?:pour|de|du|des)\b)", "s"),
        (
            0.85,
            r"\b(?:veux|voudrais) plus vivre\b|\b(?:je )?(?:ne )?en peux plus de vivre\b"
            r"|\b(?:marre|ras le bol) de (?:vivre|la vie)\b",
            "n",
        ),
        (
            0.50,
            r"\b(?:veux|voudrais) plus etre (?:la|en vie|ici)\b(?!.*\b(?:soiree|fete|reunion|cours"
            r"|boulot|travail|classe|ecole|ville|appart\w*|equipe|groupe)\b)",
            "n",
        ),
        (
            0.60,
            r"\bfatiguee? de (?:vivre|la vie)\b(?! (?:parisienne|citadine|urbaine|nocturne"
            r"|etudiante|de bureau|en ville|active|moderne|quotidienne|a)\b)|\b(?:ma|la) vie (?:ne )?"
            r"(?:a|na) (?:aucun|plus de|pas de) sens\b(?! sans)|\bje ne supporte plus rien\b",
            "n",
        ),
        (
            0.85,
            r"\b(?:je aimerais|je voudrais|je prefererais|je veux|je souhaiterais) (?:\w+ )?etre"
            r" morte?\b|\b(?:si seulement|je aimerais) (?:je )?(?:etais|etre) morte?\b",
            "n",
        ),
        (
            0.85,
            r"\b(?:un|mon) plan et (?:une|la|ma) date\b|\b(?:je ai )?(?:fixe|choisi|choisie"
            r"|decide) (?:la|une|le) (?:date|jour)\b(?! (?:de|du|des|pour|avec|la|le)\b)",
            "s",
        ),
        (
            0.95,
            r"\b(?:mettre|mettrai|mets) fin a (?:mes jours|ma vie)\b|\ben finir avec (?:la"
            r" vie|ma vie|tout)\b",
            "s",
        ),
        (
            0.90,
            r"\b(?:je veux|je voudrais|envie de|je aimerais|je vais|je prefere|je prefererais"
            r"|je souhaite|en voulant) (?:(?!pas\b|jamais\b)\w+ )?mourir\b",
            "s",
        ),  # not "je veux pas mourir"
        (
            0.90,
            r"\benvie de crever\b(?=.*\b(?:pour de vrai|pas une blague|je rigole pas"
            r"|tous les jours|chaque jour|depuis)\b)",
            "s",
        ),
        (0.45, r"\b(?:veut|voulait|veulent) mourir\b", ""),
        (0.90, r"\bsuicidaire\b|\bidees (?:noires|suicidaires)\b", "t"),
        (0.60, r"\bsuicid\w*\b", "t"),
        (
            0.85,
            r"\b(?:ne|plus) (?:\w+ )?(?:envie|veux|vouloir) (?:de )?(?:plus )?vivre\b|\bne"
            r" plus vivre\b",
            "n",
        ),
        (0.70, r"\bne plus (?:me )?reveiller\b|\bplus jamais me reveiller\b", "n"),
        (
            0.90,
            r"\bcombien de " + PILLS + r"\b(?: \w+){0,5} (?:faut|mourir|reveiller|mortel"
            r"|dose)\b",
            "n",
        ),
        (
            0.75,
            r"\bsans moi (?:\w+ ){0,4}(?:mieux|plus heureux|plus heureuse|plus simple|plus"
            r" facile)\b",
            "n",
        ),
        (0.60, r"\bne plus exister\b", "n"),
        (0.75, r"\bje (?:ne )?serai plus (?:la|ici|en vie)\b", "n"),
        (0.85, r"\bdoses? mortelles?\b|\bdoses? letales?\b", "t"),
        (
            0.65,
            r"\b(?:confie|donne|laisse) (?:\w+ ){0,2}(?:mon chien|mon chat|mes affaires(?! de (?:bebe|sport"
            r"|ski|foot|ecole|cours|bureau|naissance)))\b",
            "s",
        ),
        (0.85, r"\bmieux sans moi\b|\bmieux si je (?:etais|suis) (?:mort|morte|plus la)\b", "n"),
        (0.75, r"\b(?:je )?en (?:finis|finir|finirai)\b(?! avec (?!la vie|ma vie|tout)\w+)", "s"),
        (
            0.90,
            r"\b(?:je veux|envie de|je vais|je voudrais|je aimerais|pret a|prete a|decide a"
            r"|decidee a) en finir\b(?! avec (?!la vie"
            r"|ma vie|tout)\w+)",
            "s",
        ),
        (0.85, r"\b(?:pense|pensais|penser|songe) (?:\w+ )?(?:au|a le) suicide\b", "s"),
        (0.55, r"\b(?:je veux|je voudrais|je aimerais|envie de) disparaitre\b", "s"),
        (0.85, r"\b(?:plus|aucune|pas) (?:de )?raisons? de vivre\b", "n"),
        (
            0.85,
            r"\bla vie ne vaut (?:pas|plus) la peine\b|\bma vie ne vaut (?:rien|pas la peine"
            r"|plus la peine)\b",
            "n",
        ),
        (
            0.85,
            r"\b(?:ma|mon) dernier?e? (?:nuit|journee|soiree|jour|message)\b(?! (?:au|a|de|du|des"
            r"|en|avant|pour|ici|ce soir|aujourde hui|chez|dans)\b)(?!.*\b(?:travail|boulot|ecole"
            r"|bureau|stage|vacances|bonne nuit|dormir|lit|a demain|mdr|lol)\b)",
            "s",
        ),
        (0.80, r"\b(?:ne )?(?:entendrez|entendras) plus parler de moi\b", "n"),
        (0.50, r"\b(?:un|le|une) fardeau\b", ""),
        (0.60, r"\ba quoi bon (?:continuer|vivre|me lever|tout ca|rester)\b", "n"),
        (0.50, r"\b(?:aucun|pas de|plus de) (?:avenir|futur)\b", "n"),
        (
            0.55,
            r"\bpersonne ne (?:remarquerait|verrait|se rendrait compte|me regretterait"
            r"|me regrettera|me manquera|remarquera)\b",
            "n",
        ),
        (0.70, r"\bjamais (?:etre|ete) ne\b|\bpas (?:etre|ete) ne\b", "n"),
        (
            0.60,
            r"\bsi je (?:ne )?(?:etais|suis) plus la\b|\bdisparaitre pour (?:toujours|de bon)\b",
            "n",
        ),
        (0.45, r"\b(?:je )?(?:ne )?en peux plus\b", "n"),
        (0.35, r"\bdesespere\w*\b|\bsans issue\b", ""),
        (
            0.45,
            r"\b(?:me sens|suis) (?:\w+ )?(?:desespere\w*|sans valeur|sans espoir|inutile et"
            r" sans valeur)\b|\bme sens inutile\b(?! (?:au|a le|a la|en|dans|pour|quand)\b)",
            "",
        ),
        (0.45, r"\bje me (?:deteste|hais) (?:tellement |trop |tant )?(?=\s*$| \|)", ""),
        (0.35, r"\bje me deteste\b|\bje me hais\b", ""),
        (0.30, r"\bmerci pour tout\b", ""),
        (0.30, r"\bpersonne ne (?:se soucie de moi|me aime|en a rien a faire)\b", "n"),
        (0.25, r"\b(?:fatiguee? de tout|marre de tout|seule? au monde)\b", ""),
        (0.30, r"\bvide\b|\bplus rien (?:ne )?a (?:de )?(?:importance|sens)\b", ""),
        (0.45, r"\bne (?:se )?(?:arrangera|ira) jamais\b|\bjamais mieux\b", "n"),
        # preparation
        (
            0.85,
            r"\blettres? de adieu\b(?!.*\b(?:emigrer|etranger|demenag\w*|ville natale|village|collegue\w*"
            r"|retraite|pot de depart|boulot|travail|equipe|eleves|classe)\b)"
            r"|\bmot de adieu\b",
            "st",
        ),
        (
            0.75,
            r"\b(?:dit|dire|fait mes) adieux? a (?:tout le monde|tous|ma famille|mes amis)\b",
            "s",
        ),
        (
            0.85,
            r"\b(?:donne|donner|distribue) (?:\w+ ){0,2}(?:mes affaires(?! de (?:bebe|sport|ski|foot"
            r"|ecole|cours|bureau|naissance))|mes choses|mon chat|mon chien|tout ce que je ai)\b",
            "s",
        ),
        (0.60, r"\btestament\b", "f"),
        # means and method
        (
            0.85,
            r"\b(?:garde|gardais|stocke|accumule|mets de cote|economise) (?:\w+ ){0,3}"
            + PILLS
            + r"\b",
            "s",
        ),
        (
            0.80,
            r"\bachete (?:\w+ ){0,2}(?:une corde|de la corde|un fusil|une arme)\b(?!.*\b(?:escalade"
            r"|grimpe|bateau|voile|balancoire|remorqu\w*|chien|linge|hamac|tente|jardin|chasse"
            r"|sport)\b)",
            "s",
        ),
        (0.85, r"\bsauter (?:de le |du |de la |de un |de une |par la )?" + _HIGH + r"\b", "s"),
        (0.85, r"\b(?:sous|devant) (?:un|le) (?:train|metro|camion|bus|tram)\b", "t"),
        (0.90, r"\b(?:fusil|arme|pistolet|couteau)\b.*\bcontre moi\b", ""),
        (0.85, r"\bfoncer (?:\w+ ){0,2}(?:dans|contre) (?:un|le) (?:arbre|mur|pilier)\b", "s"),
    ],
    "self_harm": [
        (
            0.95,
            r"\b(?:brule|brulee|coupe|coupee|scarifie|scarifiee) expres\b.*\b(?:grave|cloques|peau"
            r" (?:est )?(?:toute )?blanche|sang|saigne\w*|arrete pas|peau (?:se )?en va|la peau part"
            r"|(?:trop|tres) mal)\b",
            "e",
        ),
        (
            0.95,
            r"\b(?:taillade|tailladee|ouvert|ouverte|coupe|coupee|scarifie|scarifiee)"
            r" (?:\w+ ){0,2}(?:les bras|les poignets|le bras|le poignet|les veines)\b(?=.*\b(?:rouge"
            r"|sang|saigne|saigner|baignoire|bain|profond)\b)"
            r"|\b(?:scarifie|scarifiee|coupe|coupee|taillade|tailladee)\b.*\bsaigne\b",
            "e",
        ),
        (
            0.95,
            r"\bcoupee? trop profond\w*\b|\bsang partout\b|\b(?:ne )?(?:arrete|arrete) pas de"
            r" saigner\b|\bouvert les veines\b",
            "e",
        ),
        (
            0.85,
            r"\bme " + _GAP + r"(?:scarifier|scarifie|couper|mutiler|bruler|faire du mal"
            r"|blesser)\b|\bje me (?:scarifie|coupe|mutile|brule)\b",
            "f",
        ),
        (0.70, r"\bscarif\w*\b|\bautomutil\w*\b", "t"),
    ],
    "violence_from_others": [
        # sworn threats, "te faire la peau"
        (
            0.85,
            r"\b(?:jure|jura|menace) de (?:la|le|me|te|nous|les) (?:faire )?(?:tuer|buter|descendre)\b",
            "",
        ),
        (
            0.85,
            r"\b(?:te|me|la|le|nous|vous) faire la peau\b(?=.*\b(?:menace\w*|retrouver|trouve|on va"
            r"|ils vont|il va|sortie|prison)\b)|\b(?:menace\w*|on va|ils vont|il va) (?:\w+ ){0,5}faire"
            r" la peau\b",
            "",
        ),
        # "il a dit que si je parle il me tue" (a parent's "va me tuer si je rentre
        # tard" stays an idiom)
        (
            0.85,
            r"^(?=.*\b(?:a dit|dit que|dit qu|menace\w*|jure|a jure)\b)(?!.*\b(?:retard|tard"
            r"|bulletin|notes?|chambre|devoirs|mdr|lol|ptdr)\b).*?\b(?:il|elle) (?:va )?me (?:tue"
            r"|tuer|bute|buter|massacre|massacrer)\b",
            "n",
        ),
        (
            0.85,
            r"\b(?:il|elle|mon (?:mari|copain|pere|beau pere|frere|ex)|ma (?:femme|copine"
            r"|mere|belle mere)) (?:\w+ ){0,2}me (?:frappe|bat|battait|viole|etrangle|menace)\b",
            "n",
        ),
        # a threat to kill: "il me tuerait si je parlais", "il a menacé de me tuer", "mon ex va me
        # tuer, il a un couteau" (a parent's or boss's "va me tuer quand ..." stays an idiom)
        (
            0.85,
            r"\b(?:il|elle|ils|elles) (?:\w+ ){0,2}me (?:tuerait|tuera|tueraient|tueront|buterait|butera"
            r"|buteraient|buteront|descendrait|flinguerait|flinguera)\b"
            r"|\bmenace(?:e|s)? de (?:me|nous) (?:tuer|buter|flinguer|descendre)\b",
            "n",
        ),
        (
            0.85,
            r"\b(?:il|elle|ils|elles|mon (?:mari|copain|ex|beau pere|voisin)|ma (?:femme|copine|ex)"
            r"|le (?:dealer|mec|type)|les (?:mecs|types)) (?:\w+ ){0,3}(?:va|vont|allait|veut|voulait)"
            r" (?:me|nous) (?:tuer|buter|flinguer|descendre|crever)\b(?=.*\b(?:menace\w*|couteau|arme"
            r"|flingue|pistolet|fusil|frappe\w*|tire|peur|serieux|vraiment)\b)",
            "n",
        ),
    ],
    "violence_to_others": [
        (0.85, r"\bje vais (?:le|la|les) (?:poignarder|buter|flinguer|egorger)\b", ""),
    ],
}

BOOSTERS: dict[str, list[tuple[float, str]]] = {
    "suicide": [
        (
            0.35,
            r"\b(?:ce soir|cette nuit|demain|ce week end|maintenant|bientot|cette semaine"
            r"|vendredi)\b",
        ),
        (
            0.30,
            r"\b(?:lundi|mardi|mercredi|jeudi|samedi|dimanche|la semaine prochaine|cette nuit)\b",
        ),
        (
            0.40,
            r"\b(?:tout prevu|prevu|un plan|je sais comment|je sais pourquoi|prepare"
            r"|tout est pret|tout est prete)\b",
        ),
        (0.35, r"\b(?:cachets|medicaments|corde|fusil|arme|pont|train)\b"),
        (0.30, r"\b(?:serieux|serieuse|cette fois)\b"),
        (0.45, r"\bplus besoin\b"),
    ],
    "self_harm": [
        (0.35, r"\b(?:encore|plus profond|tous les jours|chaque nuit|ce soir)\b"),
    ],
    "violence_from_others": [],
    "violence_to_others": [],
}

# Function words that tell the language of a message (see screen._languages).
STOPWORDS = frozenset(
    {
        "je",
        "j",
        "me",
        "moi",
        "mon",
        "ma",
        "mes",
        "le",
        "la",
        "les",
        "de",
        "du",
        "des",
        "un",
        "une",
        "et",
        "est",
        "suis",
        "pas",
        "ne",
        "que",
        "qu",
        "qui",
        "pour",
        "dans",
        "sur",
        "ce",
        "ca",
        "en",
        "au",
        "aux",
        "plus",
        "tout",
        "tous",
        "il",
        "elle",
        "ai",
        "avec",
        "mais",
        "ou",
        "veux",
        "vais",
        "jveux",
        "chui",
        "jsuis",
        "jai",
        "sa",
        "son",
        "ses",
        "c",
        "l",
        "y",
        "trop",
        "tres",
        "deja",
        "toujours",
        "jamais",
        "rien",
    }
)
