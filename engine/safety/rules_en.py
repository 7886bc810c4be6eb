"""English rule tables for the risk screen (data only; the logic is in ``screen.py``).

Normalisation tables (contractions, chat spellings, slang, fillers, hyperbole markers), idioms
that are blanked out before matching, and the pattern tables: one list per category, each row
``(weight, regex over normalised text, flags)``. Flags: ``s`` first-person check (someone else as
subject caps the weight), ``n`` not negatable, ``e`` behaviour in progress (level *emergency*,
see ``screen.py``).
"""

from __future__ import annotations

import re

LANG = "en"

# Contractions written with an apostrophe (applied before apostrophes are dropped).
_APOSTROPHE_FORMS = [
    (r"\bod'?d\b", "overdosed"),
    (r"\bo\.d\.?'?d\b", "overdosed"),
    (r"\bcan'?t\b", "cannot"),
    (r"\bwon't\b", "will not"),
    (r"\bain't\b", "is not"),
    (r"\bshan't\b", "shall not"),
    (r"n't\b", " not"),
    (r"'m\b", " am"),
    (r"'re\b", " are"),
    (r"'ve\b", " have"),
    (r"'ll\b", " will"),
    (r"'d\b", " would"),
    (r"\blet's\b", "let us"),
    (
        r"\b(it|he|she|that|what|there|who|where|here|how|everyone|everybody|everything|nothing"
        r"|nobody|someone|somebody|life)'s\b",
        r"\1 is",
    ),
]
APOSTROPHE_RES = [(re.compile(p), r) for p, r in _APOSTROPHE_FORMS]

# Single tokens (no apostrophe) -> replacement. Contractions, chat spelling and known misspellings.
TOKEN_MAP: dict[str, str] = {
    # contractions typed without an apostrophe ("ill", "id", "shed", "wed" are real words: skipped)
    "im": "i am",
    "ive": "i have",
    "dont": "do not",
    "doesnt": "does not",
    "didnt": "did not",
    "cant": "cannot",
    "wont": "will not",
    "wouldnt": "would not",
    "couldnt": "could not",
    "shouldnt": "should not",
    "isnt": "is not",
    "arent": "are not",
    "wasnt": "was not",
    "werent": "were not",
    "havent": "have not",
    "hasnt": "has not",
    "hadnt": "had not",
    "aint": "is not",
    "whats": "what is",
    "thats": "that is",
    "theres": "there is",
    "hes": "he is",
    "shes": "she is",
    "theyre": "they are",
    "youre": "you are",
    "hed": "he would",
    "theyd": "they would",
    "itll": "it will",
    "youll": "you will",
    "wanna": "want to",
    "gonna": "going to",
    "gotta": "got to",
    "imma": "i am going to",
    "ima": "i am going to",
    "finna": "going to",
    "tryna": "trying to",
    "lemme": "let me",
    "dunno": "do not know",
    "idk": "i do not know",
    "idc": "i do not care",
    "noone": "no one",
    "u": "you",
    "ur": "your",
    "r": "are",
    "n": "and",
    "ppl": "people",
    "cuz": "because",
    "coz": "because",
    "cos": "because",
    "bc": "because",
    "rn": "right now",
    "tn": "tonight",
    "tonite": "tonight",
    "2nite": "tonight",
    "bf": "boyfriend",
    "gf": "girlfriend",
    "abt": "about",
    "w": "with",
    "tho": "though",
    "srsly": "seriously",
    "prolly": "probably",
    "everytime": "every time",
    "pls": "please",
    "plz": "please",
    # misspellings and chat spellings of key words (longer ones are also caught by fuzzy matching)
    "kil": "kill",
    "kll": "kill",
    "kiil": "kill",
    "kilk": "kill",
    "kiling": "killing",
    "kilin": "killing",
    "killin": "killing",
    "killng": "killing",
    "kild": "killed",
    "sueside": "suicide",
    "suiside": "suicide",
    "sucide": "suicide",
    "suicid": "suicide",
    "meself": "myself",
    "mself": "myself",
    "myslf": "myself",
    "urself": "yourself",
    "ded": "dead",
    "dyin": "dying",
    "livin": "living",
    "cuttin": "cutting",
    "goin": "going",
    "nothin": "nothing",
    "wnt": "want",
    "wan": "want",
    "anymoe": "anymore",
    "selfharm": "self harm",
    "selfharming": "self harming",
    "selfharmed": "self harmed",
    "sewerslide": "suicide",
    "unaliving": "killing",
    "unalived": "killed",
    "goodbyes": "goodbye",
    "thretened": "threatened",
}

# Words matched with edit distance <= 1 (all >= 5 letters, chosen to have no common neighbours).
FUZZY_WORDS = (
    "suicide",
    "suicidal",
    "myself",
    "overdose",
    "overdosed",
    "threaten",
    "threatens",
    "threatened",
    "threatening",
    "goodbye",
    "anymore",
    "hopeless",
    "worthless",
    "strangle",
    "strangled",
    "strangling",
    "stabbing",
    "unalive",
    "sewerslide",
    "yourself",
    "abusive",
)

# Words the elongation collapse ("dieeee" -> "die") may produce; plus every FUZZY/TOKEN_MAP key.
KEY_WORDS = (
    frozenset(
        {
            "die",
            "died",
            "dead",
            "death",
            "dying",
            "kill",
            "killed",
            "killing",
            "me",
            "my",
            "myself",
            "cut",
            "cutting",
            "hurt",
            "harm",
            "end",
            "live",
            "living",
            "life",
            "alive",
            "want",
            "so",
            "please",
            "help",
            "sad",
            "no",
            "pain",
            "gone",
            "sleep",
            "forever",
            "wake",
            "up",
            "kms",
            "kys",
            "hate",
            "scared",
            "hits",
            "beats",
            "hit",
            "beat",
            "go",
            "away",
            "point",
            "done",
            "tired",
            "anymore",
            "suicide",
            "suicidal",
            "overdose",
            "pills",
            "burn",
            "burning",
            "bleed",
            "home",
        }
    )
    | frozenset(FUZZY_WORDS)
    | frozenset(TOKEN_MAP)
)

# Multi-word slang (applied to the joined token string).
PHRASE_MAP = [
    (r"(?<![0-9] )\bkms\b", "kill myself"),  # "50 kms away" is kilometres
    (r"\bk m s\b", "kill myself"),
    (r"\bsewer ?slide\b", "suicide"),
    (r"\bcommit(s|ted|ting)? sudoku\b", r"commit\1 suicide"),
    (r"\bself (harm|harms|harming|harmed|injury|injure|injuring|injured)\b", r"self harm"),
    (r"\bkill (my|me) self\b", "kill myself"),
    (r"\bmy self\b", "myself"),
    (r"\bkill \| myself\b", "kill myself"),  # "Kill. Myself."
    (r"\bcan not\b", "cannot"),
    (r"\bno 1\b", "no one"),
    (
        r"\b(want|wanna|going|need|ready|deserve|try|trying|have|got|about|wish) (?:2|too)\b",
        r"\1 to",
    ),
    (
        r"\bunalive(?= (?:myself|me|him|her|them|someone|somebody|people|everyone|my|his|the|a"
        r"|you|yourself)\b)",
        "kill",
    ),
    (r"\bunalive\b", "die"),
    (r"\bany more\b", "anymore"),
    (r"\bdye\b(?=\s*$| \|| lol| tonight| so bad| already)", "die"),  # "i wanna dye" (no object)
    (r"\bbe unalive\b", "be dead"),
]
PHRASE_RES = [(re.compile(p), r) for p, r in PHRASE_MAP]

# Dropped after hyperbole/seriousness markers are read, so patterns need not allow for them.
FILLERS = frozenset(
    {
        "just",
        "really",
        "literally",
        "honestly",
        "actually",
        "seriously",
        "totally",
        "truly",
        "genuinely",
        "kinda",
        "sorta",
        "basically",
        "lowkey",
        "highkey",
        "deadass",
        "fucking",
        "fuckin",
        "fking",
        "fkn",
        "freaking",
        "freakin",
        "frickin",
        "damn",
        "bloody",
        "even",
        "so",
        "very",
        "completely",
        "absolutely",
        "simply",
        "sometimes",
        "often",
        "always",
        "constantly",
        "almost",
        "sincerely",
        "ngl",
        "tbh",
        "fr",
        "um",
        "uh",
    }
)
FILLER_PHRASES = re.compile(
    r"\b(?:kind of|sort of|to be honest|not gonna lie|not going to lie"
    r"|you know)\b"
)

HYPERBOLE = re.compile(
    r"\b(?:lol+|lmao+|lmfao+|rofl|haha\w*|hehe\w*|jk|jking|xd|ha ha|/j"
    r"|(?:just|only|i am|am) (?:kidding|joking))\b"
)
HYPERBOLE_EMOJI = re.compile("[\U0001f602\U0001f923\U0001f480\U0001f606\U0001f605\U0001f92a]")
SERIOUS = re.compile(
    r"\b(?:not joking|no joke|not kidding|i am serious|i mean it|for real"
    r"|deadass|seriously|/srs|srs|i am not okay|half joking|(?:jk|kidding|joking)"
    r" not really)\b"
)
# A method joke about an everyday annoyance ("if this meeting runs over I'm jumping out the window
# lol", "I'd rather throw myself off a bridge than go to Ikea on a Saturday"): the method, a trivial
# trigger, and a joke marker or a condition; screen.py then reads no suicide risk in it.
JOKE_METHOD = re.compile(
    r"\b(?:jump(?:ing)? (?:off|out|from|in front)|throw(?:ing)? myself"
    r"|hang(?:ing)? myself|shoot(?:ing)? myself|drown(?:ing)? myself"
    r"|walk(?:ing)? into traffic|stab(?:bing)? myself)\b"
)
JOKE_TRIVIAL = re.compile(
    r"\b(?:meetings?|zoom|teams|calls?|lectures?|class|seminar|lesson"
    r"|mondays?|commute|wifi|internet|printer|laptop"
    r"|charger|ads?|advert|song|playlist|show|series|episode|boss fight"
    r"|raid|ikea|wedding|prom|in laws|mother in law|aunt|neighbou?r|queue"
    r"|hold music|customer service|tax return|paperwork|spreadsheet"
    r"|group project|emails?|presentation|team building|lanyard|karaoke"
    r"|hoover|vacuum\w*|jingle|ringtone|keys|lunch|coffee|tinsel|reply all|code|bug|compil\w*|excel)\b"
)
JOKE_IF = re.compile(r"\b(?:if|one more|another|again|once more|rather|last time i|could)\b")


# A denial in the user's own words ("I'm not suicidal"): read by screen.denied with the rules'
# negated hits.
DENIAL = re.compile(r"\b(?:i am|im) not (?:suicidal|going to do anything stupid)\b")

# An explicit harmless purpose ("kill it at the gym", "as prescribed", "to change the bulb"): when
# the rules see no risk, the learned layer may not raise such a message past concern (learned.py).
PURPOSE = re.compile(
    r"\b(?:kill(?:ed|ing)?|smash(?:ed|ing)?|nail(?:ed|ing)?|slay(?:ed|ing)?) it (?:at|on|in|tonight|today|tomorrow)\b"
    r"|\bas (?:prescribed|directed|the (?:doctor|doc|gp) (?:said|told me))\b"
    r"|\b(?:doctor|doc|gp|pharmacist) (?:prescribed|told me to take|said to take)\b"
    r"|\bto (?:change|replace|fix|hang(?: up)?|put up|tie up|tighten|take down) (?:the|a|my|our) (?:\w+ )?"
    r"(?:bulbs?|lights?|lamps?|curtains?|shelf|shelves|pictures?|washing|washing line|clothes ?line|swing|hammock"
    r"|tarp|tent|decorations?|fairy lights|smoke alarm)\b"
    r"|\b(?:rope|cord|line|strap)s? (?:\w+ )?for (?:the |a |my |our )?(?:tent|camping|camp|tarp|boat|hammock|move|moving"
    r"|climbing|roof rack)\b"
    r"|\b(?:end|close|start|begin) (?:this|that|a|the|my|a new) (?:new )?chapter\b"
    r"|\bd[iy]e(?:d|ing)? (?:my|her|his|their|your|our) (?:\w+ )?hair\b"
    r"|\b(?:car|engine|motor|van|truck)\b.{0,30}\b(?:wont|won t|will not|doesnt|does not|didnt) (?:start|turn over)\b"
    r"|(?<!not )(?<!isnt )(?<!is not )\bfor (?:climbing|bouldering|camping|the tent|sailing|the boat|the swing)\b"
)


# ---------------------------------------------------------------------------------------------
# 2. Idioms and benign uses, blanked out before the risk patterns run
# ---------------------------------------------------------------------------------------------

_PERSONS = (
    r"(?:man|woman|person|guy|girl|kid|kids|child|children|baby|boy|stranger|cop|police"
    r"|teacher|someone|somebody|bitch|bastard|asshole|prick|dude|family|class|school"
    r"|people|boss|judge|neighbou?r|whole)"
)
IDIOMS = [
    r"\bdrown(?:ing)? (?:myself|my sorrows) in (?!(?:the |a )?(?:water|river|sea|lake|bath|canal|ocean|pond)\b)\w+",
    # a rope bought for climbing, said before the purchase ("going climbing, bought a new rope")
    r"\b(?:climb\w*|boulder\w*|hiking|abseil\w*|sailing|camping)\b(?: (?:\w+|\|)){0,8} (?:bought|got|ordered)"
    r" (?:a |some |the )?(?:new )?rope\b",
    # "career suicide", "the raid boss is suicide to solo": a risky choice called suicide
    r"\b(?:career|political|social|financial|commercial|fashion|electoral|brand|professional)"
    r" suicide\b",
    r"\b(?:is|was|be|s|d be|would be) (?:literally |basically |pure |just |total |absolute )?"
    r"suicide (?:to|with|on|without|in this|in that|for (?:a|the|your|our|his|her))\b",
    # "I'm going to kill my brother if he eats my leftovers", "she's going to kill me when ..."
    r"\b(?:going to|gonna|will|ll) kill (?:my \w+|him|her|them|you) (?:if|when)\b",
    r"\b(?:is|are|s|re) (?:going to|gonna) kill me (?:when|if|once)\b",
    r"\b(?:jump|throw myself) off (?:a|the) (?:cliff|bridge|roof) if (?:this|that|the|he|she|they"
    r"|it|my|one more)\b",
    r"\b(?:\w+ )?(?:is|are|was|were|be|been|keeps?|kept) killing me\b",  # exam/feet/suspense
    r"\bkilling me softly\b",
    r"\bdying (?:to|for) (?:see|try|know|meet|go|hear|watch|read|get|have|eat|tell|visit|find"
    r"|play|listen|talk|show|a|an|some|the)\b",
    r"\b(?:die|died|dying|dead) (?:of|from) (?:laughter|laughing|embarrassment|boredom|curiosity"
    r"|cringe|thirst|hunger|heat|cuteness|shame)\b",
    r"\b(?:nearly |almost )?died (?:laughing|of laughter)\b",
    r"\b(?:die|died|dying|dye|dyed) (?:my|her|his|the|their|your) (?:hair|clothes|shirt|fabric"
    r"|eggs|beard|jeans|roots)\b",
    r"\b(?:could|would|will) (?:murder|kill|destroy|demolish) (?:a|an|some|the) (?!"
    + _PERSONS
    + r")\w+",  # could murder a pizza
    r"\b(?:would|will|could) kill for (?:a|an|some|the|\w+)\b",  # I'd kill for a coffee
    r"\b(?:killed|killing|kill|kills|nailed|slayed|smashed) it\b",  # killed it at work
    r"\b(?:joke|jokes|song|set|show|performance|outfit|look|comedian|pun|line|album|movie|film)"
    r" (?:killed|kills|slayed|slays)\b",
    r"\bdead (?:tired|beat|serious|wrong|right|set|last|centre|center|end|silent|quiet|asleep"
    r"|on|weight|heat|ringer|giveaway|easy|simple)\b",
    r"\b(?:phone|battery|laptop|computer|pc|car|engine|plant|plants|wifi|internet|tv|charger"
    r"|printer|headphones|mouse|keyboard|console|server|app|game|conversation|chat|party|vibe"
    r"|mood|hype|trend|meme|show|series|lightbulb|bulb|torch|remote|controller|ps5|xbox"
    r"|tablet|ipad|iphone|airpods|switch|mac|screen)s? (?:is |has |had |just |finally )?"
    r"(?:died|dead|dying|die|dies)\b",
    r"\b(?:kill|killed|killing|kills|end|ended|ending) (?:the |this |that |a |all |my |your |our"
    r" |his |her )?(?:process|processes|task|tasks|job|jobs|server|app|application|program"
    r"|thread|session|tab|tabs|window|switch|engine|lights|light|music|power|bug|bugs|mood|vibe"
    r"|time|joke|pid|container|instance|query|batch|game|level|mob|mobs|zombie|zombies"
    r"|monster|monsters|enemy|enemies|npc|dragon|spider|fly|mosquito|weeds|germs|bacteria"
    r"|buzz|battery|plant|plants|conversation|call|meeting|stream|shift|rumou?r|deal|noise"
    r"|bottle|pint|drink|chances?|two birds)\b",
    r"\b(?:kill|pkill|killall|sigkill|sigterm|kill -?9) \d+\b",
    r"\b(?:kill|killed|killing|shoot|shot|shooting|stab|stabbed) (?:\w+ ){0,4}(?:in|on) (?:the )?"
    r"(?:game|fortnite|minecraft|roblox|valorant|cod|call of duty|apex|overwatch|league|halo|gta"
    r"|pubg|csgo|cs|match|lobby|server|among us|dnd|d and d|campaign|book|novel|story|movie)\b",
    r"\b(?:cut|cutting|cuts|chop|chopping|slice|slicing) (?:the |some |up |my |a |an |off )?"
    r"(?:vegetables|veggies|onions?|carrots?|bread|meat|paper|fabric|wood|grass|lawn|hedge|cake"
    r"|pizza|fruit|tomato(?:es)?|potato(?:es)?|lemons?|limes?|coupons?|costs?|ties|class"
    r"|classes|corners|back|down|out|carbs|sugar|calories|cheese|sandwich|wire|rope|cards"
    r"|video|clip|scene|film|losses|budget|spending|prices?|chicken|fish|steak|apple|melon"
    r"|herbs|garlic|stone|glass|tile|tiles|hair)\b",
    r"\b(?:cut|cutting|cuts|trim|trimmed|trimming) (?:my|his|her|their|your|our) (?:own )?"
    r"(?:hair|nails|fringe|bangs|beard|toenails|fingernails|losses|lawn|grass|hedge|ties|costs"
    r"|spending|hours|sugar|carbs|screen time|coffee)\b",
    r"\bcut (?:myself|me) (?:some )?slack\b",
    r"\b(?:cut|cutting|cuts) (?:myself|me) (?:off|out)\b",
    r"\b(?:accidentally|accidently) (?:cut|burned|burnt|burn|hurt|stabbed|hit) (?:myself|my \w+)",
    r"\b(?:cut|burned|burnt|burn|hurt|injured|scratched|stabbed|hit|bumped) (?:myself|my (?:hand"
    r"|finger|fingers|thumb|arm|tongue|mouth|foot|toe|knee|leg|back|head|ankle|wrist|shoulder"
    r"|lip|nose)) (?:shaving|cooking|chopping|baking|gardening|by accident|accidentally"
    r"|on (?:a|the|some|an) (?!arms?|wrists?|legs?|thighs?|stomach|skin|hips?|purpose)\w+"
    r"|at (?:the )?(?:gym|work|practice|training|game|park)|playing \w+|(?:while|when) \w+ing"
    r"|during \w+|in (?:the )?(?:kitchen|garden|gym|game|match)|lifting|running|working out"
    r"|skating|falling|climbing)\b",
    r"\b(?:the )?(?:sun|sunburn|sunlight|heat|chilli|chili|pepper|acid|wasabi) (?:is |was )?"
    r"(?:burning|burned|burnt) my \w+",
    r"\bsuicide (?:squad|doors?|drills?|sprints?|runs?|silence|king|boys|girls|blonde|forest"
    r" movie|song|mission|pact movie)\b",
    r"\b(?:dressed|shoot|shot|shoots|shooting) (?:to kill|the breeze|for the (?:moon|stars)"
    r"|(?:a|an|the) (?:photo|picture|video|film|movie|scene|pic|pics|photos|ad|commercial"
    r"|trailer|hoop|hoops|shot|message|email|text)|hoops|me (?:a|an) (?:text|message|email|dm"
    r"|line|call))\b",
    r"\bphoto ?shoot\b",
    r"\b(?:hit|hits|hitting) me (?:up|back|like a truck|like a ton|with (?:the |a |an |some"
    r" |your |that |this )?(?:news|question|questions|facts?|truth|jokes?|pun|song|songs|track"
    r"|beat|tunes?|idea|reality|link|details|info|pillow|snowball|water balloon|feels))\b",
    r"\b(?:it|that|this|reality|life|the news|news|realization|realisation|the thought|thought"
    r"|the feeling|feeling|depression|anxiety|grief|wave|nostalgia|sadness|song|music|hunger"
    r"|tiredness|exhaustion|jet lag|car|bus|truck|bike|ball|door|branch|wind|rain) (?:really )?"
    r"(?:hit|hits|hitting|has hit|just hit) me\b",
    r"\b(?:beat|beats|beating|beaten|beats|kicked|kicks|smashed|destroyed|crushed|owned|whooped"
    r"|wrecked) me (?:at|in|to|by|fair and square|again at)\b",
    r"\b(?:overdose|overdosed|od|oded|odd) on (?:coffee|caffeine|sugar|chocolate|netflix|anime|tv"
    r"|candy|memes|work|content|tiktok|youtube|cuteness|love|sweets|cake|energy drinks|tea)\b",
    r"\b(?:shoot|shooting|shot|shoots) (?:myself|yourself|himself|herself|ourselves|themselves) in the foot\b",
    r"\b(?:jump|jumped|jumping) off (?:the|a) (?:diving board|boat|dock|pier|swing|couch|bed"
    r"|trampoline|sofa|stage|bus|train|plane|call)\b",
    r"\bmurder (?:mystery|mysteries|podcast|documentary|show|series|drawer|hornets?|board"
    r"|she wrote)\b",
    r"\b(?:could|can) sleep (?:forever|for (?:a week|days|a year|a month|ages|hours))"
    r"(?: after| because| since| i am so tired)?",
    r"\bsleep forever (?:after|on|this weekend|tomorrow)\b",
    r"\b(?:end|ended|ending|ends) (?:it|things) (?:with|between) (?:him|her|them|my \w+|us"
    r"|(?!(?:a|an|the|some|pills|rope|gun|knife|blade|razor|tablets|meds)\b)\w+)\b",
    r"\bend (?:of )?(?:the|this|my|our) (?:day|week|month|year|shift|semester|term|call"
    r"|meeting|relationship|contract|lease|streak)\b",
    r"\b(?:mom|mum|mother|dad|father|parents|teacher|boss|coach|sister|brother|grandma|grandpa"
    r"|family|mama|papa|nan|nana) (?:is |are |will |would )?(?:going to |gonna )?(?:kill"
    r"|murder) me (?:when|if|once) (?:she|he|they|mom|dad) (?:sees?|saw|finds? out|found out"
    r"|hears?|heard|notices?|noticed|knows?|knew|realis(?:es|e|ed)|realiz(?:es|e|ed)|gets? home"
    r"|gets? back|catches|caught)\b",
    r"\b(?:will|is going to|would|going to|gonna) (?:kill|murder) me (?:if|when) i (?:am late"
    r"|get|forget|miss|fail|lose|break|spend|eat|do not|mess|show up|come home late|skip|am not"
    r"|burn|crash|scratch|spill|dent)\b",
    r"\bkill me with (?:this|these|all|so much|the|his|her|their|your|its) (?:\w+ )?(?:work"
    r"|workload|homework|assignments?|deadlines?|meetings?|jokes?|puns?|cuteness|kindness"
    r"|questions?|emails?|chores?|demands)\b",
    r"\b(?:following|followed|follows|follow) me (?:on|back|around the (?:house|kitchen|flat"
    r"|apartment) (?:for|like|because|all day|whining)|everywhere i go like a puppy)\b",
    r"\bgiving (?:\w+ ){0,4}away (?:because|since|as|before) (?:i am|we are|i am going|we)"
    r" (?:moving|decluttering|downsizing|leaving for)\b",
    r"\b(?:i am |i )?(?:dead|dying) (?:lol|lmao|haha|rn)\b",
    r"\b(?:killer|killers) (?:app|feature|queen|heels|view|workout)\b",
    r"\bkill (?:two birds|the lights|the engine|switch)\b",
    r"\bover my dead body\b",
    r"\bdrop dead (?:gorgeous|beautiful)\b",
    r"\b(?:what is|whats) the point of (?:this|that|the|a|an|your|his|her|my|these|those)"
    r" (?!life\b|existence\b|living\b)\w+",
    r"\bthe (?:assignment|exam|test|work|project|meeting|class|movie|show|game|book) (?:is |was"
    r" )?(?:the death of me|going to be the death of me)\b",
    r"\b(?:going to be|will be|is|was) the death of me\b",
    r"\bthreaten(?:ed|ing|s)? to (?:rain|snow|storm)\b",
]

_KIN = (
    r"(?:husband|wife|boyfriend|girlfriend|partner|ex|fiance|fiancee|dad|father|mom|mum"
    r"|mother|stepdad|stepfather|stepmom|stepmum|stepmother|step dad|step mom|brother|sister"
    r"|stepbrother|stepsister|uncle|aunt|grandpa|grandfather|grandma|grandmother|cousin"
    r"|parents?|family|son|daughter|roommate|flatmate|housemate|landlord|boss|manager"
    r"|coworker|co worker|colleague|teacher|coach|neighbou?r|classmates?|bully|bullies"
    r"|friends?|guardian|carer|caregiver|foster \w+|pastor|priest|doctor|pimp|brother in law"
    r"|ex husband|ex wife|ex boyfriend|ex girlfriend|dealer)"
)
_PERSON_AGENT = (
    r"(?:he|she|they|someone|somebody|people|this guy|that guy|some guy|a guy"
    r"|a man|a woman|this man|that man|a stranger|my "
    + _KIN
    + r"|his "
    + _KIN
    + r"|her "
    + _KIN
    + r"|their "
    + _KIN
    + r")"
)
# ... or any other word, most often a name ("jake hits me"), but not things, pets or babies.
_AGENT = (
    r"(?:" + _PERSON_AGENT + r"|(?!(?:it|that|this|what|which|life|baby|cat|dog|kitten"
    r"|puppy|toddler|horse|ball|car|bus|wave|music|song|reality|news|thought|feeling"
    r"|there|who|one|karma|anxiety|depression|grief|guilt|sadness|loneliness|tiredness"
    r"|exhaustion|hunger|fear|pain|work|school|exam|test)\b)[a-z]+)"
)
_TARGET = (
    r"(?:him|her|them|someone|somebody|people|everyone|everybody|anyone|anybody|others"
    r"|(?:that|this|the|a) (?:guy|girl|man|woman|person|kid|child|stranger|cop|teacher"
    r"|bitch|bastard|asshole|prick|dude|family|class|school|baby)|my "
    + _KIN
    + r"|my (?:baby|kids?|children|child|son|daughter|dog|cat)|his \w+|her \w+|\w+ and \w+)"
)
PILLS = (
    r"(?:pills|pill|tablets|meds|medication|medications|medicine|painkillers|antidepressants"
    r"|paracetamol|tylenol|acetaminophen|ibuprofen|advil|aspirin|insulin|xanax|benzos"
    r"|oxy|oxycodone|opioids|sleeping pills|sleeping tablets|prescription|capsules"
    r"|lithium|valium|codeine|co codamol|co dydramol)"
)
_MANY = (
    r"(?:whole|entire|full|bottle|bottles|pack|packet|packets|box|boxes|handful|bunch|every|strip|strips"
    r"|too many|\d{2,})"
)
_HIGH = (
    r"(?:bridge|roof|rooftop|ledge|edge|cliff|balcony|railing|tracks|train tracks|parking"
    r" garage|tower|building|overpass|window ledge|top floor)"
)
_WANT = (
    r"(?:want to|wish i could|would like to|need to|have to|am going to|going to|will|ill"
    r"|am about to|about to|ready to|plan to|planning to|planning on|thinking about|thinking"
    r" of|think about|thought about|thought of|considering|might|should|could|tempted to"
    r"|decided to|try to|tried to|trying to|attempted to|urge to|urges to|feel like"
    r"|(?:might|could|will|going to|am going to|about to|gonna)? ?snap and)"
)

RULES: dict[str, list[tuple[float, str, str]]] = {
    "suicide": [
        # a gun loaded and at hand, legs over a drop, pills put aside until "enough"
        (
            0.95,
            r"^(?=.*(?<!not )(?<!unloaded )\b(?:loaded|cocked|safety off|safety is off)\b)(?=.*\b(?:in my lap|on my lap"
            r"|in my hand|in my hands|in my mouth|to my head|against my head|at my temple|under my chin"
            r"|in front of me|next to me|beside me|between my knees)\b)(?!.*\b(?:range|hunt\w*|club"
            r"|movie|film|game|show|novel|museum|scene|class|lesson|cleaning|clean it)\b).*?\b(?:gun"
            r"|pistol|rifle|shotgun|revolver|glock|handgun|service weapon)\b",
            "e",
        ),
        (
            0.95,
            r"^(?=.*\b(?:floor|storey|story|roof|rooftop|window|bridge|balcony|ledge|railing|cliff"
            r"|multistorey|car park|parking garage|overpass)\b)(?!.*\b(?:pool|dock|pier|jetty|boat"
            r"|swing|hammock|photo\w*|selfie|sunset|view|picnic|paddl\w*|sun|sunbath\w*|tan|tanning"
            r"|smok\w*|cigarette|fag|vape|vaping|beer)\b).*?\b(?:legs|feet)"
            r" (?:\w+ ){0,3}(?:outside|over the edge|over the side|dangling|hanging over|out the window"
            r"|over the railing|over the drop)\b",
            "e",
        ),
        (
            0.85,
            r"\b(?:putting|put|set|setting|squirrell?ing|tucking) (?:\w+ ){0,3}"
            + PILLS
            + r" (?:\w+ ){0,3}aside\b(?!.*\b(?:kids|children|reach|safe place|trip|holiday|vacation|travel\w*"
            r"|pharmacist|doctor|dosette|pill ?box|organi[sz]er|morning|week)\b)|\b"
            + PILLS
            + r" (?:\w+ ){0,2}(?:saved up|put aside|stashed"
            r" away)\b|\b" + PILLS + r"\b.*\b(?:nearly|almost|just about|finally) enough\b"
            r"(?! (?:for|to last|until|till)\b)",
            "s",
        ),
        # overdose said in three words, lethality of a car or a height
        (
            0.85,
            r"\b(?:swallowed|downed|necked) (?:them|it|the lot) all\b|\b(?:swallowed|downed)"
            r" (?:all of them|the lot)(?= *(?:\||$))",
            "f",
        ),
        (
            0.85,
            r"\bhow long (?:does it take|would it take|until|before)\b.*\b(?:closed garage|exhaust"
            r"|car running|engine running|charcoal|carbon monoxide)\b",
            "n",
        ),
        (
            0.85,
            r"\b(?:does it hurt|is it painful|how painful is it|would it hurt) to (?:drown|hang"
            r"|bleed out|jump|overdose)\b",
            "n",
        ),
        (
            0.80,
            r"\b(?:make it|want it to|it to|would it|will it) (?:look|seem) (?:like )?(?:natural"
            r"|an accident|accidental|a heart attack)\b",
            "n",
        ),
        # lethality and access questions, means asked for evasively, calm preparation
        (
            0.85,
            r"\b(?:is|are|would|will) (?:\d{2,}|a (?:whole )?(?:bottle|box|pack|packet) of) (?:\w+ )"
            r"{0,2}" + PILLS + r" (?:\w+ ){0,2}(?:enough|lethal|fatal|deadly)\b",
            "n",
        ),
        (
            0.85,
            r"\b(?:do|does|would|will|can|could) (?:people|you|someone|anyone|a person|i) (?:\w+ )"
            r"{0,2}survive (?:a |the |that |this )?(?:fall|jump|drop|\d+|that|it)\b|\b(?:people|you"
            r"|someone|anyone) (?:do not|does not|would not|will not|cannot|never) survive (?:a |the )?"
            r"(?:fall|jump|drop)\b",
            "t",
        ),
        (
            0.85,
            r"\bhow long (?:does it take|would it take|(?:do |would |can |could )?you last"
            r"|(?:do |would |can )?people last|until you|before you) (?:\w+ ){0,3}(?:to die"
            r"|to drown|to bleed out)\b",
            "t",
        ),
        (
            0.80,
            r"\b(?:which|what) (?:bridges?|buildings?|car parks?|multi storeys?|cliffs?|floors?"
            r"|stations?) (?:\w+ ){0,4}(?:do not|does not|without) (?:\w+ ){0,3}(?:fences?"
            r"|barriers?|nets?|railings?|cameras?)\b",
            "n",
        ),
        (
            0.85,
            r"\b(?:rope|cord|noose|helium|charcoal|pills|tablets|gun|pistol|shotgun|ammo"
            r"|ammunition|bullets|razor|blades|hose)\b.*\b(?:do not ask(?: why| me why)?(?= *(?:\||$))|no questions asked"
            r"|not for (?:the |a )?(?:balloons?|bbq|barbecue|camping|view|climbing|party))\b",
            "n",
        ),
        (0.85, r"\bloose ends (?:after|afterwards|when i am gone|once i am gone)\b", "n"),
        (
            0.85,
            r"\b(?:note|notes|letter|letters|email|emails|message|messages|video|videos)\b.*"
            r"(?:^|\| )for (?:after|afterwards|when i am gone|once i am gone)(?= *(?:\||$))",
            "n",
        ),
        (
            0.85,
            r"\b(?:nobody|no one|none of them) knows (?:that )?(?:it was|it is|this was|this is"
            r"|that was) (?:the )?last time\b",
            "n",
        ),
        # behaviour in progress (level "emergency"): an overdose taken, poison, at a height now
        (
            0.95,
            r"\b(?:took|taken|take|swallowed|downed|necked|popped|ate|had|drank|drunk) (?:\w+ )"
            r"{0,3}" + _MANY + r" (?:\w+ ){0,5}" + PILLS + r"\b",
            "fe",
        ),
        (
            0.95,
            r"\b(?:took|taken|swallowed|downed|necked|popped) (?:\w+ ){0,2}all (?:\w+ ){0,3}"
            + PILLS
            + r"\b(?=.*\b(?:sleepy|blurry|dizzy|goodbye|bye|sorry|die|dying|end"
            r"|purpose|at once|whatever|telling|nobody|racing|eyes open|numb|shaking|shake"
            r"|heart)\b)",
            "fe",
        ),
        (
            0.95,
            r"\b(?:took|taken|swallowed|downed|necked|popped) (?:\w+ ){0,2}(?:the|my) (?:\w+ )?"
            + PILLS
            + r"\b(?=.*\b(?:goodbye|bye|sorry|die|dying|end|purpose|at once"
            r"|whatever happens|not telling|too late|no going back|cannot undo)\b)",
            "fe",
        ),
        (
            0.95,
            r"\bmixed (?:\w+ ){0,3}with (?:\w+ ){0,3}(?:whole |entire |all )?" + PILLS + r"\b",
            "fe",
        ),
        (
            0.95,
            r"\b(?:i |just |i just |i have |already )?(?:overdosed|took an overdose|have taken"
            r" an overdose|taken an overdose)\b(?! on (?:coffee|caffeine|sugar|chocolate|tv|netflix"
            r"|anime|memes|work|love|sweets|cake|tea|energy))",
            "fe",
        ),
        (
            0.95,
            r"\b(?:drank|swallowed|drunk|drinking|ate|took|had) (?:\w+ ){0,4}(?:bleach|poison"
            r"|rat poison|antifreeze|drain cleaner|weed killer|pesticide|weedkiller)\b",
            "fe",
        ),
        (
            0.95,
            r"\b(?:i am|am|standing|sitting|i am standing|i am sitting) (?:\w+ ){0,3}(?:on|at"
            r"|off|by) (?:the |a |this |my )?(?:edge |ledge |top |roof |railing )?(?:of )?(?:the "
            r"|a |this |my )?" + _HIGH + r"\b(?=.*\b(?:jump|jumping|fall|falling|down|train"
            r"|waiting|this is it|goodbye|end|tell someone|high|let go)\b)(?!.*\b(?:waiting (?:for|on)"
            r" (?:my|a|the|our|him|her|them|you)|photos?|pictures?|view|sunset|selfie|fixing"
            r"|repair\w*|delayed|late again)\b)",
            "fe",
        ),
        # at the edge or on the tracks now, even without a word about jumping
        (
            0.95,
            r"\b(?:i am|am|standing|sitting|i am standing|i am sitting|lying|i am lying)"
            r" (?:\w+ ){0,2}(?:on|at) (?:the |a |this )?(?:ledge|edge|railing|wrong side of the"
            r" railing|other side of the railing) (?:of |on )?(?:the |a |this |my )?(?:\w+ )?"
            r"(?:bridge|roof|rooftop|building|parking garage|garage|balcony|cliff|tower|overpass"
            r"|top floor)\b(?!.*\b(?:photos?|pictures?|view|sunset|selfie|fixing|repair\w*|reading"
            r"|book|coffee|smoking|smoke)\b)"
            r"|\b(?:i am|am|standing|sitting|lying|i am standing|i am sitting|i am lying) (?:\w+ )"
            r"{0,2}(?:on|between) (?:the )?(?:train |railway |rail )?tracks\b(?!.*\b(?:model|toy"
            r"|photos?|pictures?)\b)|\b(?:i am|am) on the ledge\b",
            "fe",
        ),
        (
            0.95,
            r"\b(?:rope|noose|belt|cord) (?:\w+ ){0,3}(?:is tied|is ready|is up|around my"
            r" neck)\b|\bwith it around my neck\b",
            "e",
        ),
        (0.95, r"\bengine running\b(?=.*\bgarage\b)|\bgarage\b(?=.*\bengine running\b)", "e"),
        # charcoal in a sealed room, a noose and something to stand on: in any order
        (
            0.95,
            r"^(?=.*\b(?:charcoal|barbecue|bbq|grill)\b)(?=.*\b(?:lit|lighting|burning|lighted)\b)"
            r"(?!.*\b(?:garden|outside|backyard|patio|park|yard)\b).*?\b(?:taped|sealed)\b",
            "e",
        ),
        (
            0.95,
            r"^(?=.*\b(?:rope|noose)\b)(?!.*\b(?:bulb|lamp|curtain|shelf|climbing|gym|swing|boat"
            r"|tent)\b).*?\b(?:standing|stood|i am|am|up) (?:\w+ ){0,2}on (?:a |the |my )?(?:chair|stool"
            r"|ladder|stepladder|box|bucket)\b",
            "e",
        ),
        (
            0.95,
            r"\b(?:gun|knife|blade|razor|pistol|rifle) in my hand\b(?=.*\b(?:now|right now)\b)"
            r"|\b(?:gun|knife|blade|razor|pistol) (?:to|against) my (?:head|wrist|wrists|throat"
            r"|neck|chest)\b|\b(?:gun|pistol|barrel|muzzle) (?:is )?in my mouth\b",
            "e",
        ),
        (
            0.95,
            r"\b(?:jumped|fell|threw myself) (?:from|off) (?:the |a |my |this )?(?:balcony|bridge"
            r"|roof|building|window|overpass)\b(?!.*\b(?:into the (?:lake|river|water|sea|pool"
            r"|ocean)|for fun|swim\w*|tradition|bungee)\b)",
            "fe",
        ),
        (
            0.95,
            r"\b(?:slit|cut|slashed) (?:my|both) wrists\b(?=.*\b(?:bath|blood|bleeding|red|now"
            r"|right now)\b)",
            "fe",
        ),
        (
            0.95,
            r"\b(?:tried|trying|attempted) to (?:hang|kill|shoot|drown|poison) (?:himself|herself"
            r"|themselves)\b(?=.*\b(?:breathing|unconscious|waking|wake|answering|responding"
            r"|bleeding|what do i do|help|hospital)\b)",
            "e",
        ),
        (
            0.95,
            r"\b(?:she|he|they|friend|brother|sister|mom|mum|dad|son|daughter|partner|girlfriend"
            r"|boyfriend|wife|husband|roommate|flatmate|cousin) (?:\w+ )"
            r"{0,3}(?:took|taken|swallowed|overdosed)\b(?: \w+){0,5}(?=.*\b(?:not answering"
            r"|not responding|unconscious|not breathing|will not wake|cannot wake|passed out"
            r"|what do i do|help|not waking up|is not waking|unresponsive)\b)",
            "e",
        ),
        # means, method and preparation named outright
        (
            0.85,
            r"\b(?:i am|i will|i|am) ending (?:it|things|everything|my life)\b(?! (?:with|between))",
            "s",
        ),
        (0.90, r"\b(?:drink|starve|bleed|drinking|starving) myself to death\b", ""),
        (
            0.85,
            r"\b(?:my )?last (?:night|day|week) (?:alive|on earth|on this earth|ever)\b|\bthis is"
            r" my last (?:night|day|message|goodbye|post)\b(?! (?:at|in|of|before|for|on|with|as"
            r"|from|here|today|tonight|until|till)\b)(?!.*\b(?:work|job|school|office|shift|class"
            r"|holiday|vacation|trip|camp|internship|semester|term|good night|goodnight|sleep|bed"
            r"|see you|lol)\b)",
            "s",
        ),
        (
            0.80,
            r"\b(?:nobody|no one|you|they|everyone) (?:will |would )?(?:have to|need to|has to)"
            r" (?:deal with|worry about|put up with|take care of) me (?:anymore|after \w+|much"
            r" longer|for much longer|soon)\b(?!.*\b(?:shift|work|class|haha|lol|trip|holiday)\b)",
            "n",
        ),
        (
            0.95,
            r"\b(?:going to|gonna|about to|will|i will|i am going to) (?:jump|step|throw myself)"
            r" (?:\w+ ){0,3}(?:when|before|as) the (?:next )?train (?:comes|arrives|gets here"
            r"|pulls in)\b",
            "e",
        ),
        (0.80, r"\b(?:will not|wont|never) hear from me (?:again|anymore)\b", "n"),
        (0.90, r"\b(?:decided to|planning to|plan to|trying to|tried to) die\b", "s"),
        (0.70, r"\b(?:rope|noose) (?:\w+ ){0,3}(?:in my|under my|ready|hidden|hanging)\b", "s"),
        (
            0.75,
            r"\b(?:death|dying|being dead) (?:would be|is|sounds like|feels like|seems) (?:a |the"
            r" )?(?:relief|release|peace|peaceful|better|easier|answer|only way|way out)\b",
            "s",
        ),
        (
            0.85,
            r"\b(?:know|decided|figured out) (?:which|what|how many) (?:pills|tablets|meds"
            r"|medication) (?:to take|i would take|i need)\b|\bhave enough (?:pills|tablets|meds"
            r"|of them) to\b",
            "s",
        ),
        (
            0.85,
            r"\bhow (?:high|tall) (?:a|the) (?:building|bridge|balcony|cliff|floor|drop)"
            r" (?:has to|needs to|must|would have to|should) be\b",
            "n",
        ),
        (0.95, r"\b(?:off|offing) myself\b", "f"),
        (
            0.85,
            r"\b(?:pills|tablets|meds|rope|gun|razor|blades) (?:\w+ ){0,2}(?:counted out|lined up"
            r"|laid out|ready|set out|sorted out)\b",
            "s",
        ),
        (
            0.80,
            r"\b(?:picked|chosen|chose|found) (?:the|a|my) (?:bridge|building|method|rope|tree"
            r"|cliff)\b",
            "s",
        ),
        (
            0.50,
            r"\b(?:picked|chosen|chose) (?:the|a|my) (?:spot|place|date|day)\b(?! (?:for|of|to"
            r"|with|and)\b)",
            "s",
        ),
        (
            0.85,
            r"\b(?:a|my|the) plan and (?:a|the|my) (?:date|day|time)\b(?! (?:for|of|to|with)\b)",
            "s",
        ),
        (
            0.65,
            r"\bi (?:have |had )?(?:picked|chosen|chose|set) (?:the|a|my) (?:date|day)\b(?! (?:for"
            r"|of|to|with|and)\b)",
            "s",
        ),
        (
            0.80,
            r"\bi (?:will |am going to |am gonna |gonna |shall )?(?:end it all|end my life"
            r"|end everything)\b(?! (?:with|between|for|early|there|here|at|on)\b)|\bi (?:will |am"
            r" going to |am gonna |gonna |shall )?end it(?: tonight| today| for good| once and for"
            r" all| this time)?(?=\s*$| \|)",
            "f",
        ),
        (
            0.60,
            r"\b(?:bother|point in|point of) (?:staying|being|keeping myself) alive\b|\bwhy am i"
            r" (?:even |still )?alive\b|\bwhy (?:should|do) i (?:even )?(?:keep )?(?:living|going"
            r" on|stay alive)\b",
            "n",
        ),
        (
            0.85,
            r"\b(?:planning to|plan to|decided to|going to|am going to|will) end (?:it|everything"
            r"|it all|this)\b(?! (?:with|between|for|early|there|here|now lol))",
            "s",
        ),
        (0.85, r"\b(?:lethal|fatal|deadly) (?:dose|doses|amount|amounts)\b", "t"),
        (0.85, r"\b(?:gun|pistol|rifle|shotgun)\b.*\bend (?:this|it|everything|my life)\b", ""),
        (
            0.85,
            r"\b(?:saving|saved|hoarding|hoarded|stockpiling|stockpiled|collecting|collected"
            r"|stashing|stashed|keeping|kept) (?:up )?(?:\w+ ){0,2}" + PILLS + r"\b",
            "f",
        ),
        (
            0.70,
            r"\b(?:bought|got|buying|ordered) (?:a |some |the )?(?:rope|noose|charcoal)\b(?!.*\b"
            r"(?:climb\w*|camping|camp|boat|sail\w*|swing|tow\w*|gym|skipping|jump rope|dog\w*"
            r"|laundry|hammock|bbq|barbecue|grill\w*|tent|garden|crossfit|workout)\b)",
            "f",
        ),
        (0.85, r"\bcharcoal\b(?=.*\btape\b)", ""),
        (0.85, r"\b(?:use|using) (?:it|the gun|a gun|the knife|them) on myself\b", ""),
        (
            0.85,
            r"\b(?:walk|walking|swim|swimming) (?:out )?into the (?:sea|ocean|river|lake|water)"
            r"\b(?=.*\b(?:keep going|not come back|never come back|not stop)\b)",
            "f",
        ),
        (
            0.85,
            r"\b(?:enough|high enough|strong enough|tall enough) to (?:not survive|not wake up"
            r"|die|kill me|kill myself)\b|\b(?:which|what) height\b",
            "n",
        ),
        (
            0.85,
            r"\b(?:note|letter|letters) for (?:whoever|the person who|anyone who) finds me\b"
            r"|\bwhoever finds me\b",
            "n",
        ),
        (
            0.80,
            r"\b(?:instructions|plans|arrangements|wishes) for my funeral\b|\bplanned my"
            r" (?:own )?funeral\b",
            "n",
        ),
        (
            0.85,
            r"\b(?:said|told(?: \w+){1,3}|say) goodbye (?:\w+ ){0,3}without (?:telling|saying) (?:her|him"
            r"|them|anyone|why)\b",
            "n",
        ),
        (
            0.85,
            r"\b(?:will not|wont|not going to) be alive (?:by|next|on|after|tomorrow|much"
            r" longer|for long)\b",
            "n",
        ),
        (
            0.85,
            r"\b(?:stepping|step|jump|jumping|throw myself) in front of (?:it|one|the next one)\b",
            "f",
        ),
        # families of risk the rules missed in all three languages:
        # a goodbye message of one's own; for when I'm not here; goodbyes kept secret; scheduled
        (
            0.85,
            r"^(?!.*\b(?:work|job|team|colleagues?|coworkers?|boss|retir\w*|leaving do|card|class"
            r"|school|students?|teacher|moving|abroad|office|company|coach|club|camp|season)\b).*?"
            r"\bmy (?:goodbye|farewell) (?:notes?|letters?|videos?|messages?|texts?|voice notes?"
            r"|voicemails?|emails?|recordings?)\b",
            "s",
        ),
        (
            0.85,
            r"^(?!.*\b(?:trip|holiday|vacation|travel\w*|away|abroad|conference|hospital|surgery"
            r"|work trip|deployment|deployed|weekend|next week|sitter|babysitter)\b).*?\bfor when"
            r" (?:i am|im) (?:not (?:here|around) anymore|no longer (?:here|around)|gone for good)\b",
            "",
        ),
        (
            0.85,
            r"\b(?:saying|said|say) goodbye (?:to )?(?:\w+ ){0,8}"
            r"without (?:them|anyone|her|him|people|any of them) (?:realising|realizing|knowing"
            r"|noticing)\b(?!.*\b(?:mov\w*|abroad|new job|surprise|party|leaving do)\b)"
            r"|\b(?:they|she|he|nobody|no one) (?:do not|does not|did not|dont|doesnt|didnt) know"
            r" (?:it is|it was|its|that it is|that it was|this is) (?:the|my) last (?:time|goodbye)\b"
            r"(?!.*\b(?:mov\w*|abroad|new job|season|team|club)\b)",
            "n",
        ),
        (
            0.80,
            r"^(?=.*\b(?:parents|mum|mom|dad|kids|children|wife|husband|family|sister|brother"
            r"|daughter|son)\b)(?!.*\b(?:birthday|anniversary|mothers day|fathers day|wedding|holiday"
            r"|work|reminder|bill|invoice|surprise|invitation|christmas)\b).*?\b(?:scheduled|schedule"
            r"|set (?:it|them) to send|timed) (?:\w+ ){0,3}(?:emails?|messages?|texts?|letters?"
            r"|posts?|voice notes?)\b",
            "s",
        ),
        (
            0.90,
            r"\b(?:only thing|all that is|all thats) left (?:to do )?is (?:the|my) (?:note|letter"
            r"|goodbye|goodbyes)\b",
            "n",
        ),
        (
            0.80,
            r"\bso (?:nobody|no one|noone) (?:is|has|will have|gets) (?:left|to) (?:with it|to deal"
            r" with|sort|clear|clean|deal with|sort out)\b(?!.*\b(?:holiday|trip|move|moving|party)\b)",
            "s",
        ),
        # lethality: enough if all at once, exhaust on newer cars, to look natural, painless
        (
            0.85,
            r"^(?=.*\b(?:" + PILLS[3:-1] + r"|patches|\d+)\b).*?\b(?:is|are|would|will) (?:that|it"
            r"|this|these|they|\d+) (?:be )?enough (?:if i (?:take|swallow|have|used?) (?:them |it )?(?:all|at once"
            r"|every)|to (?:not wake"
            r"|never wake|die|do it|end it|kill))\b",
            "n",
        ),
        (
            0.85,
            r"^(?=.*\b(?:exhaust|carbon monoxide|co poisoning|hosepipe)\b)(?!.*\b(?:mot|mechanic|garage"
            r" quote|repair|leak|alarm|detector|boiler|heater|emissions test)\b).*?\b(?:still work|work with"
            r"|works with|newer cars|catalytic|modern cars)\b",
            "t",
        ),
        (
            0.85,
            r"\b(?:think|assume|believe|say|rule) (?:\w+ ){0,2}(?:it was|its|it is|was) (?:an accident"
            r"|natural causes|a heart attack|natural)\b(?=.*\b(?:i|my|me)\b)(?=.*\b(?:die|dying|dead|death|crash"
            r"|pills|overdose|insurance|body|find me|ashamed|shame|suicide)\b)",
            "t",
        ),
        (
            0.90,
            r"\b(?:how|ways?) to do it (?:painlessly|without (?:pain|it hurting|feeling it|making a"
            r" mess))\b|\b(?:quickest|fastest|easiest|surest|most painless) way to (?:die|end it"
            r"|end my life)\b",
            "n",
        ),
        (
            0.90,
            r"\bwhich (?:beam|rafter|branch|hook|pipe|banister) (?:\w+ ){0,4}(?:hold|take|support)"
            r" (?:me|my weight)\b",
            "n",
        ),
        (
            0.85,
            r"\b(?:life insurance|insurance|policy)\b.*\bsuicide\b(?!.*\b(?:client|customer|exam"
            r"|course|agent|broker|class|lecture)\b)",
            "n",
        ),
        # scouting a height or a train: not for the view; the roof door; freight trains; the spot
        (
            0.85,
            r"^(?=.*\b(?:" + _HIGH[3:-1] + r"|beachy head|cliffs|quarry|viaduct|dam|car park)\b)"
            r".*?\b(?:not|is not|was not|isnt|wasnt|and not) for the (?:view|views|photos|pictures"
            r"|sunset|scenery)\b",
            "n",
        ),
        (
            0.85,
            r"^(?=.*\b(?:beachy head|cliffs?|bridge|viaduct|quarry)\b).*?\bone way (?:ticket)?\b"
            r"(?!.*\b(?:flight|fly|holiday|home|back by|return)\b)",
            "n",
        ),
        (
            0.80,
            r"\b(?:roof|rooftop) (?:door|access|hatch) (?:\w+ ){0,4}(?:never|not|always un) ?(?:locked)\b"
            r"(?=.*\b(?:went up|been up|was up|floors|storeys|stories|looked down|top|edge)\b)"
            r"(?!.*\b(?:bbq|barbecue|party|sunbath\w*|smok\w*|landlord|security|burglar\w*)\b)",
            "s",
        ),
        (
            0.85,
            r"^(?=.*\b(?:times|timetable|schedule|know when|every night|at night)\b)(?!.*\b(?:late"
            r"|delay\w*|commut\w*|photo\w*|model|hobby|noise|noisy|loud|sleep)\b).*?\bfreight trains?\b",
            "s",
        ),
        (
            0.80,
            r"\b(?:been out|went|go|going|walked|drove) (?:\w+ ){0,3}to the (?:quarry|cliff|cliffs"
            r"|bridge|viaduct|edge|dam)\b.*\b(?:not walking back|not coming back|wont come back|will"
            r" not come back|next time)\b",
            "s",
        ),
        (
            0.85,
            r"\b(?:rope|hose|hosepipe|charcoal|tape|helium)\b.*\b(?:(?:was not|wasnt|is not|isnt|not)"
            r" for (?:the |a )?(?:garden|tent|camping|washing|swing|hammock|bbq|barbecue|car|boat|balloons)"
            r"|(?:told|said|tell) (?:\w+ ){0,5}(?:it was|its|it is) for (?:a|the|my) (?:tent|garden|swing"
            r"|camping|boat|hammock|washing line))\b",
            "n",
        ),
        (
            0.85,
            r"^(?=.*\b(?:if i|after|not exaggerating|they all see|results|when|on \w+day|tonight"
            r"|tomorrow)\b)(?!.*\b(?:we|were|terrace|bar|pub|party|lmao|lmfao|rofl|jk|xd)\b).*?\b(?:(?:i am|im|i will"
            r"|ill|gonna|going to) (?:just )?(?:jump|go|going|throw myself)|jumping) off (?:a|the|this|that|my) (?:\w+ )?(?:roof|car park"
            r"|multistorey|multi storey|bridge|building|tower|cliff)\b(?!.*\b(?:into the (?:lake|river|water"
            r"|sea|pool|ocean)|swim\w*|bungee|parachute|paragliding|fair|dare|lol|haha|meeting|lecture)\b)",
            "s",
        ),
        (
            0.95,
            r"\b(?:went|gone|jumped|threw (?:himself|herself|themselves|myself)) (?:over the side|overboard)"
            r"\b(?=.*\b(?:on purpose|deliberately|cannot see|can not see|cant see)\b)",
            "e",
        ),
        (
            0.85,
            r"^(?=.*\b(?:"
            + PILLS[3:-1]
            + r"|pils)\b).*?\btonight (?:might|could|will|is going to|is)"
            r" (?:be )?the night\b",
            "n",
        ),
        # cars and water
        (
            0.85,
            r"^(?=.*\b(?:picture|picturing|thinking|think|want|going to|gonna|could|on purpose|urge"
            r"|tempted|keep)\b)(?!.*\b(?:someone|somebody|a driver|the driver|lorry driver|accident on|crash on"
            r"|dream)\b).*?\b(?:driv\w*|crash\w*|swerv\w*|steer\w*|turn\w* the wheel|yank\w* the wheel) (?:my car )?"
            r"(?:\w+ ){0,2}into (?:a|the|that) (?:\w+ )?(?:divider|barrier|pillar|tree|wall|lorry|truck"
            r"|central reservation|median|oncoming traffic|bridge support)\b",
            "s",
        ),
        (
            0.95,
            r"^(?!.*\b(?:swim\w*|wetsuit|paddl\w*|holiday|kids|dog|fun|dare|charity|dip)\b).*?\b(?:walked"
            r"|waded|went|walking|wading) (?:\w+ ){0,2}into the (?:sea|lake|river|ocean|water|loch|canal"
            r"|reservoir)\b(?=.*\b(?:clothes on|fully clothed|in my clothes|up to my (?:chest|neck|chin"
            r"|shoulders)|not coming back)\b)",
            "e",
        ),
        (
            0.85,
            r"^(?!.*\b(?:swing|hammock|tyre|tire|punching bag|climb\w*|pulley|hoist|lift|winch|washing"
            r"|laundry|tarp|bales?|gym|boxing|tested|testing|test|practi[cs]ed|last night|yesterday)\b).*?"
            r"\b(?:ropes|rope is|noose is|noose|rope|belt|cord|sheet) (?:\w+ ){0,2}(?:over|round|around"
            r"|tied to|on|from) the (?:beam|rafter|rafters|banister|bannister|loft hatch|pipe|hook|door"
            r" frame|bars)\b",
            "e",
        ),
        # behaviour in progress said without the method word
        (
            0.95,
            r"\b(?:shot up|used|took|did|snorted|injected|swallowed) (?:everything|all (?:of )?(?:it|what)"
            r"|the lot|all my|all the)\b(?=.*\bon purpose\b)",
            "e",
        ),
        (
            0.95,
            r"\b(?:texted|messaged|said|called) (?:me |us )?(?:to say )?goodbye\b.*\b(?:at|on) the"
            r" (?:cliffs?|bridge|edge|roof|tracks|quarry|viaduct)\b(?=.*\b(?:right now|now|wont pick up"
            r"|will not pick up|not answering)\b)",
            "e",
        ),
        (
            0.95,
            r"^(?=.*\b(?:right now|now|ending it|screaming|wont put|will not put)\b).*?\b(?:razor|blade"
            r"|knife) (?:over|on|against|to|at) (?:his|her|their) (?:wrists?|throat|neck)\b",
            "e",
        ),
        (
            0.90,
            r"\b(?:as if|like) it (?:was|were|is) the last time\b(?: \|)? (?:because|cause|cos|coz) it is\b",
            "n",
        ),
        (
            0.95,
            r"\bjumped\b(?=.*\b(?:(?:legs|leg|hip|back|ankle|arm) (?:is |s )?(?:broken|smashed)|cannot"
            r" (?:get up|move|feel my legs))\b)(?!.*\b(?:trampoline|ski\w*|skat\w*|horse|bike|football"
            r"|match|parkour|climb\w*|game|hike|wall|fence|stairs|puddle)\b)",
            "e",
        ),
        (
            0.95,
            r"\b(?:went|gone|cut) too far (?:with the|this time)\b(?=.*\b(?:razor|blade|blood|cut|knife)\b)",
            "e",
        ),
        (
            0.95,
            r"\b(?:did|took|used|had|shot up) (?:way |far |much )?too much on purpose\b(?!.*\b(?:ate|eat"
            r"|food|cake|pizza|chocolate|sugar|coffee|lol|haha)\b)",
            "e",
        ),
        # passive ideation and hopelessness (concern)
        (
            0.55,
            r"\bwould not mind (?:if (?:i|a|\w+) )?(?:died|dying|_|not waking|being dead"
            r"|disappearing|never waking)",
            "n",
        ),
        (0.45, r"\b(?:cannot|can not|do not) see (?:a|any) (?:way out|future|point)\b", "n"),
        (
            0.45,
            r"\b(?:do not|no longer) care (?:what happens to me|if i live|if i die|whether i"
            r" live)\b",
            "n",
        ),
        (
            0.45,
            r"\bnothing (?:is )?(?:ever )?going to get better\b|\bit will never get better\b",
            "n",
        ),
        (0.30, r"\btrapped\b", ""),
        # weak signals (below concern alone; engine/safety/conversation.py adds them up)
        (0.30, r"\b(?:thank you|thanks) for everything\b", ""),
        (0.30, r"\b(?:no one|nobody) (?:cares|would care|will care|gives a)\b", "n"),
        (0.25, r"\b(?:tired of everything|so tired of it all|exhausted by everything)\b", ""),
        (0.25, r"\b(?:all alone|completely alone|nobody understands me)\b", "n"),
        # explicit
        (0.95, r"\bkill(?:ing|ed|s)? myself\b", ""),
        (0.95, r"\b(?:end|ending|ended|take|taking|took) my (?:own )?life\b", ""),
        (0.90, r"\bcommit(?:s|ted|ting)? suicide\b", "t"),
        (
            0.90,
            r"\b(?:i am|i feel|feeling|i have been|been|i was|getting|i get"
            r"|becoming) suicidal\b",
            "",
        ),
        (0.90, r"\bsuicidal (?:thoughts?|ideation|feelings?|urges?|again|tonight)\b", "s"),
        (0.60, r"\bsuicidal\b", "t"),
        (0.85, r"\b(?:thinking|thought|think|thoughts) (?:about|of) suicide\b", "s"),
        (0.90, r"\b(?:attempt|attempting|attempted|try|tried|trying) (?:to )?suicide\b", "s"),
        (
            0.90,
            r"\b(?<!makes me )(?<!made me )(?<!make me )(?<!making me )"
            r"(?:want(?:s|ed)? to|wish i could|going to|ready to|deserve to|should|would rather"
            r"|need to|wish i would|hope i|hoping i|i want to|wanting to|longing to|i would"
            r" like to|plan to|wish to|better to|i am going to) die\b(?! (?:of|from|for|than))",
            "s",
        ),
        (0.60, r"\b(?:makes?|made|making) me (?:want to|wanna) die\b", ""),
        (
            0.85,
            r"\b(?:everything|life|living|being alive|existing|everyone|being me|my life)"
            r" (?:makes?|made|making) me (?:want to|wanna) die\b",
            "",
        ),
        (0.90, r"\b(?:wish|wishing|want|wanted) (?:i|to) (?:was|were|be|am) dead\b", ""),
        (0.90, r"\b(?:better(?: off| of)?|rather be) dead\b", "s"),
        (
            0.70,
            r"\b(?:do not|cannot|can not|never) (?:see|imagine|picture) myself (?:alive|being"
            r" alive|being here|here|around|living|still here|making it) (?:next|in|by|much"
            r"|for|at|past|after)\b",
            "n",
        ),
        (
            0.85,
            r"\bhow many (?:pills|tablets|sleeping pills|painkillers)(?: \w+){0,2} (?:it takes"
            r"|does it take|would it take|it would take|it will take|to die|to kill|to end|to overdose"
            r"|to not wake up)\b",
            "s",
        ),
        (
            0.70,
            r"\b(?:think|thinking|thought|thoughts) (?:about|of) (?:dying|being dead|not being"
            r" here|not existing|not being alive|ending it)\b",
            "s",
        ),
        (
            0.80,
            r"\b(?:calling it quits|call it quits|quit|quitting|giving up) on (?:life|living"
            r"|being alive)\b",
            "s",
        ),
        (0.50, r"\bi want out(?=\s*$| \|)", ""),
        (0.50, r"\b(?:going to|want to|about to|ready to) jump(?=\s*$| \|| tonight| now)", "s"),
        (0.85, r"\b(?:i should|should i) be dead\b", ""),
        (0.75, r"\bkill me now\b(?! lol)", ""),
        (0.60, r"\bsuicide\b", "t"),  # any other first-person-ish mention
        (
            0.45,
            r"\b(?:kill|killed|killing|kills|hurt|hurting|hurts|cut|cutting|cuts) (?:himself"
            r"|herself|themselves|themself)\b",
            "",
        ),  # someone else at risk: still concern
        # indirect
        (
            0.85,
            r"\b(?:do not|no longer|not) want to (?:live|be alive|exist|be here anymore"
            r"|wake up|go on|keep going|be around anymore)\b",
            "n",
        ),
        (0.50, r"\bdo not want to be here\b", "n"),
        (
            0.85,
            r"\b(?:wish|wishing) (?:i|to) (?:could |would )?(?:not|did not|do not|never|stop)"
            r" (?:exist|existed|existing|wake up|be here|be alive)\b",
            "n",
        ),
        (0.85, r"\b(?:stop|stopped) existing\b", "s"),
        (
            0.80,
            r"\b(?:tired|sick) of (?:living|being alive|existing|life|this life|it all|being"
            r" here)\b",
            "s",
        ),
        (
            0.85,
            r"\b(?:no|not any|not a) (?:reason|point) (?:to|in|of) (?:live|living|go on|going"
            r" on|being alive|existing|keep going|stay|staying|life)\b",
            "n",
        ),
        (0.85, r"\bnothing (?:left )?to live for\b", "n"),
        (
            0.85,
            r"\b(?:life is|life|my life is|living is) not worth (?:living"
            r"|it)(?: anymore)?\b",
            "n",
        ),
        (
            0.75,
            r"\bwhat is the point (?:of|in) (?:living|life|going on|being alive|existing"
            r"|waking up|carrying on|me|my life|staying alive)\b",
            "n",
        ),
        (
            0.50,
            r"\bwhat is the point (?:of|in) (?:anything|it all|everything|trying|any of this"
            r"|this life|continuing|even trying)\b",
            "n",
        ),
        (0.35, r"\b(?:what is the|there is no) point anymore\b", "n"),
        (
            0.75,
            r"\bwhy (?:should|would|do|am) i (?:keep living|keep going|go on|stay alive|even"
            r" live|be alive|alive|still alive|exist|still here)\b",
            "n",
        ),
        (0.90, r"\b(?:end|ending|ended) it all\b", "s"),
        (0.75, _WANT + r" (?:end|ending) (?:it|things|everything)\b", "s"),
        (
            0.65,
            r"\bend (?:it|everything|things) (?:tonight|today|soon|now|for good|once and for"
            r" all)\b",
            "s",
        ),
        (0.85, r"\b(?:be|are|is|would be|will be) better(?: off)? without me\b", "n"),
        (
            0.85,
            r"\b(?:better|happier|easier)(?: off)? (?:for everyone |for them )?(?:without me"
            r"|if i (?:was"
            r"|were) (?:gone|dead|not here|not around)|if i (?:died|disappeared))\b",
            "n",
        ),
        (
            0.75,
            r"\b(?:no one|nobody|not one|none of them) (?:would|will) (?:miss|notice|care)"
            r"(?: about)?(?: me| if i (?:died|was gone|disappeared|left|was dead))\b",
            "n",
        ),
        (
            0.80,
            r"\b(?:do not|not|no longer) want to be (?:alive|here anymore|around anymore"
            r"|a burden)\b",
            "n",
        ),
        (
            0.80,
            r"\b(?:will not|not going to|wont) be (?:here|around) (?:much longer|for long"
            r"|tomorrow|anymore|next week|by tomorrow)\b(?!.*\b(?:travel\w*|trip|holiday|vacation"
            r"|flight|flying|away|visiting|work|shift|school|class|meeting|dentist|doctor|sick|busy"
            r"|offline|moving|move)\b)",
            "n",
        ),
        (
            0.75,
            r"\b(?:will|i will) be gone (?:soon|tomorrow|tonight|by)\b(?!.*\b(?:travel\w*|trip"
            r"|holiday|vacation|flight|flying|visiting|work|shift|camp|moving|weekend)\b)",
            "s",
        ),
        (0.75, r"\bwhen i am gone\b", ""),
        (0.80, r"\b(?:after|once) i am gone\b", ""),
        (
            0.50,
            r"\b(?:i am|i feel like|feel like i am|i feel|am) (?:a |such a "
            r"|only a )?burden\b",
            "",
        ),
        (
            0.80,
            r"\b(?:will not|wont) be (?:a )?(?:burden|problem) (?:much longer|for long"
            r"|anymore)\b",
            "n",
        ),
        (
            0.70,
            r"\b(?:want to|going to|wish i could|just want to|i will|to) (?:go to )?sleep"
            r" forever\b",
            "s",
        ),
        (0.40, r"\bsleep forever\b", "s"),
        (
            0.80,
            r"\b(?:sleep|go to sleep|fall asleep|close my eyes) and (?:never|not|do not) wake"
            r" (?:up|again)\b",
            "n",
        ),
        (
            0.80,
            r"\b(?:hope|wish|hoping|want|pray) (?:i |to )?(?:never|not|do not|will not)"
            r" wake up\b",
            "n",
        ),
        (0.70, r"\b(?:wish|wishing) i (?:was|were|had) (?:never|not) (?:been )?born\b", "n"),
        (0.70, r"\bshould (?:never|not) have been born\b", "n"),
        (
            0.55,
            r"\b(?:want to|wish i could|i will|going to) disappear\b(?! (?:into|for a"
            r"|for the|to|on"
            r"|with|from|in|under|inside|behind))",
            "s",
        ),
        (0.70, r"\b(?:disappear|disappearing) forever\b", "s"),
        (
            0.60,
            r"\b(?:cannot|can not|could not) (?:go on|keep going|keep doing this|do this anymore|take (?:it"
            r"|this)"
            r" anymore|live like this|carry on)\b",
            "n",
        ),
        (0.40, r"\bno way out\b", "n"),
        (
            0.45,
            r"\b(?:feel|feeling|i am|am) (?:hopeless|worthless)\b(?! (?:at|with|in|when|about"
            r"|for)\b)",
            "",
        ),
        (0.35, r"\b(?:feel|feeling|i am|am) (?:empty|dead inside|numb)\b", ""),
        (0.30, r"\b(?:i give up|nothing matters)\b", "s"),
        (0.45, r"\b(?:giving up|give up) on (?:life|everything|living)\b", "s"),
        (
            0.45,
            r"\b(?:everything|life|it all|my life|the future) (?:feels|is|seems) hopeless\b",
            "",
        ),
        (0.35, r"\bi hate (?:my life|being alive|myself|existing)\b", ""),
        (
            0.45,
            r"\bi (?:really )?hate myself(?: so much| much| fucking much| more than anything"
            r"| every day)?(?=\s*$| \|)",
            "",
        ),
        # preparations
        (
            0.85,
            r"\b(?:writing|wrote|write|written|leave|leaving|left|finished) (?:a |my |some"
            r" |the )?(?:goodbye|farewell|last) (?:letters?|notes?|messages?|texts?"
            r"|videos?)\b",
            "s",
        ),
        (
            0.90,
            r"\b(?:writing|wrote|write|written|leave|leaving|left|finished|draft|drafted)"
            r" (?:a |my |the )?suicide notes?\b",
            "s",
        ),
        (
            0.65,
            r"\b(?:giving|gave|give|given) (?:away )?(?:all )?(?:of )?my (?:favou?rite |precious"
            r" |prized |most precious |important )?(?:stuff|things|belongings|possessions|stuffs"
            r"|pets?|cat|dog|everything)(?: away)?\b",
            "s",
        ),
        (
            0.65,
            r"\b(?:giving|gave|give|given) (?:away )?(?:all|everything) (?:i own"
            r"|i have)\b",
            "s",
        ),
        (
            0.65,
            r"^(?!.*\b(?:last day|my job|new job|at work|retir\w*|leaving do|colleagues?|coworkers?|team|office|moving|move"
            r"|abroad|class|school|camp|party|wedding|holiday)\b).*?(?:\b(?:saying|said|say) goodbye to (?:everyone|everybody|my family|my friends"
            r"|you all|all of you|you guys|the world)\b|\b(?:said|saying) my goodbyes?\b)",
            "s",
        ),
        (0.65, r"\b(?:this is|it is) (?:my )?(?:final )?goodbye\b", "s"),
        (0.60, r"\bgoodbye forever\b", "s"),
        (0.50, r"\b(?:made|making|updated|wrote) (?:a |my )?will\b", "s"),
        # methods (detected, never echoed back in messages)
        (
            0.90,
            r"\b(?:want to|going to|will|plan to|thinking about|about to|might|could|tried"
            r" to|try to|to) (?:take |do )?(?:an )?(?:overdose|od)\b",
            "s",
        ),
        (0.85, r"\b(?:overdose|overdosing|overdosed|overdoses)(?! on (?:coffee|sugar))\b", "t"),
        (
            0.90,
            r"\b(?:took|take|taking|swallow|swallowed|swallowing) (?:all|a bunch of|too many"
            r"|a lot of|every|the whole (?:bottle|strip|box|pack|packet|tub) of|all of) (?:my |the |of my )?(?:pills|tablets"
            r"|meds|medication|painkillers)\b",
            "s",
        ),
        (
            0.95,
            r"\b(?:hang|hanging|hanged|shoot|shooting|shot|drown|drowning|poison|poisoning"
            r"|stab|stabbing|suffocate|starve) myself\b",
            "",
        ),
        (0.95, r"\b(?:slit|slitting) (?:my|both|open my) wrists?\b", ""),
        (
            0.85,
            r"\b(?:throw|throwing|hurl|hurling|fling|flinging|launch|launching) myself (?:off"
            r"|from|out of) (?:a|the|this|that|my) (?:\w+ )?(?:bridge|building|roof|rooftop|cliff"
            r"|balcony|tower|overpass|parking garage|garage|window|ledge)\b",
            "t",
        ),
        (
            0.85,
            r"\b(?:step|stepping|jump|jumping|throw myself|lie down|lay down|lying down) (?:under"
            r"|onto|on) (?:a|the) (?:train|bus|truck|lorry|subway|tracks|train tracks|railway"
            r" tracks)\b(?! (?:to|and) (?:work|school|home|town)\b)(?!.*\b(?:visit\w*|to see|weekend|holiday"
            r"|trip|commut\w*|ticket|back home|to london|to the city|festival)\b)",
            "s",
        ),
        (
            0.85,
            r"\b(?:jump|jumping|jumped) (?:off|from) (?:a|the|this|that|my) (?:bridge|building"
            r"|roof|rooftop|cliff|balcony|tower|overpass|parking garage|window)\b(?!.*\b(?:into the"
            r" (?:lake|river|water|sea|pool|ocean)|for fun|swim\w*|tradition|bungee|parachute)\b)",
            "t",
        ),
        (
            0.85,
            r"\b(?:step|stepping|jump|jumping|walk|walking|throw myself) in front of (?:a|the)"
            r" (?:train|bus|car|truck|lorry|subway)\b",
            "s",
        ),
        (
            0.85,
            r"\b(?:step|stepping|walk|walking|run|running|throw myself) (?:out )?into (?:the )?"
            r"(?:oncoming )?(?:traffic|motorway traffic|highway traffic)\b",
            "s",
        ),
        (
            0.80,
            r"\b(?:drive|driving|crash|crashing|swerve|swerving) (?:my car )?(?:into|off) (?:a"
            r"|the) (?:tree|wall|bridge|cliff|river|lake|barrier|truck|road|edge|oncoming"
            r" traffic)\b",
            "s",
        ),
        (
            0.90,
            r"\b(?:i|me) (?:should |will |might |am going to |want to |am about to |am )?kys\b"
            r"|\b(?:going to|want to|about to) kys\b",
            "s",
        ),
        (
            0.85,
            r"\b(?:pills|tablets|meds|medication|painkillers)\b(?: \w+){0,8} (?:take|taking"
            r"|swallow|swallowing|took) (?:them|all of them|it) all\b",
            "s",
        ),
        (
            0.60,
            r"\b(?:want|need|wish|wishing) (?:it all|everything|the pain|it|this|all of this|my"
            r" life) to (?:stop|end|be over)\b",
            "s",
        ),
        (0.80, r"\b(?:feel|feeling|felt) like dying\b", ""),
        (
            0.70,
            r"\b(?:done|finished) with (?:life|living|everything|it all|this world|being"
            r" alive|existing|this life)\b",
            "s",
        ),
        (
            0.50,
            r"\b(?:goodbye|bye) (?:everyone|everybody|world|cruel world|all of you|forever)\b"
            r"(?!.*\b(?:see you|see ya|talk (?:to you )?(?:later|tomorrow|soon)|ttyl|until"
            r" tomorrow|till tomorrow|good night|gn|for now|brb|back later|later|tomorrow)\b)",
            "s",
        ),
        (0.30, r"\bi am done\b", ""),
        (
            0.70,
            r"\b(?:a|my|the) plan\b(?: \w+){0,6} (?:pills|rope|gun|blades?|razors?)\b"
            r"|\b(?:pills|rope|gun|blades?|razors?)\b(?: \w+){0,6} (?:a|my|the) plan\b",
            "s",
        ),
        (0.50, r"\brather (?:die|be dead) than\b", "s"),
        (
            0.75,
            r"\b(?:had|have had) enough of (?:living|life|being alive|existing|it all|this"
            r" life|everything)\b",
            "s",
        ),
        (
            0.90,
            r"\b(?:ways|way|how|methods?|best way|easiest way|painless way) to (?:die|end it"
            r"|end my life|kill myself|commit suicide|not wake up)\b|\bpainless (?:way to go"
            r"|death)\b",
            "s",
        ),
        (
            0.60,
            r"\b(?:do not|not) think i (?:will|am going to|can) make it (?:through the night"
            r"|to tomorrow|much longer|through this week|through today)\b",
            "n",
        ),
        (
            0.60,
            r"\b(?:no one|nobody|not one) (?:cares|would care|will care) (?:if|whether) i"
            r" (?:live|die|am alive|am dead|disappear)\b",
            "n",
        ),
        (0.60, r"\bwant out of (?:this life|life|this world|existence|everything)\b", "s"),
        (
            0.45,
            r"\b(?:it is all|life is|everything is|my life is|living is|life feels|my life"
            r" feels|everything feels|living feels) pointless\b",
            "s",
        ),
    ],
    "self_harm": [
        (
            0.95,
            r"\b(?:cut|burned|burnt|sliced) (?:\w+ ){0,3}too deep\b|\bbleeding (?:will not"
            r"|would not|does not|cannot|wont|is not going to) stop\b|\b(?:so much|lots of|a"
            r" lot of) blood\b|\bneed(?:s)? stitches\b|\bskin is (?:coming off|peeling off"
            r"|melting)\b",
            "e",
        ),
        (
            0.60,
            r"\b(?:staring|stare|looking) at (?:my )?(?:wrists?|the knife|the blade|the"
            r" razor)\b",
            "",
        ),
        (
            0.85,
            r"\b(?:razor|blade|knife) (?:over|on|against|to) my (?:wrist|wrists|arm|arms|skin"
            r"|throat|thigh|thighs)\b",
            "",
        ),
        (
            0.95,
            r"\b(?:will not|would not|cannot|does not|wont|is not going to) stop bleeding\b"
            r"|\bbleeding through\b|\bsoaked (?:in|with) blood\b",
            "e",
        ),
        (
            0.80,
            r"\b(?:cut|cutting|cuts|slash|slashing|slashed|carve|carving|carved) (?:myself|my"
            r" (?:arms?|wrists?|thighs?|legs?|skin|stomach|hips?|body|ankles?|chest|forearms?"
            r"|face))\b",
            "",
        ),
        (
            0.80,
            r"\b(?:burn|burning|burned|burnt|burns) (?:myself|my (?:arms?|wrists?|skin|thighs?"
            r"|legs?|hands?|stomach|body|forearms?))\b",
            "",
        ),
        (0.55, r"\b(?:hurt|hurting|hurts|injure|injuring|injured) myself\b", ""),
        (0.85, _WANT + r" (?:hurt|harm|injure|cut|burn|punish) myself\b", ""),
        (
            0.85,
            r"\b(?:hurt|hurting|harm|harming|cut|cutting|injure|injuring) myself (?:on purpose"
            r"|deliberately|intentionally|again|every (?:day|night)|to (?:feel|cope|punish|stop)"
            r"|because i deserve)\b",
            "",
        ),
        (0.85, r"\b(?:harm|harming|harmed|punish|punishing|punished) myself\b", ""),
        (
            0.85,
            r"\bi (?:have been |am |started |start |keep |still |do )?(?:self harm|self harming"
            r"|sh)\b",
            "",
        ),
        (
            0.90,
            r"\b(?:relapsed?|relapsing)(?: on| into| with| back into| back to)?(?: my)?"
            r" (?:sh|self harm|cutting|burning)\b",
            "",
        ),
        (
            0.80,
            r"\b(?:urge|urges|want|wanting|craving|cravings|tempted) to (?:sh|self harm|cut"
            r"|cut again|burn)\b",
            "",
        ),
        (0.75, r"\b(?:sh|self harm|cutting) (?:urges|scars?|wounds?|cuts|again|relapse|kit)\b", ""),
        (
            0.70,
            r"\b(?:started|been|keep|kept|stop|stopped|quit|relapsed|urge to|urges to|want to"
            r"|need to|going to|thinking about|miss|back to|went back to) (?:cutting|cut)"
            r"(?=\s*$| \|| again| lately| more| myself| every| at night| because| for)",
            "",
        ),
        (
            0.75,
            r"\bi (?:cut|cutted) (?:again|last night|today|yesterday|this morning"
            r"|tonight)\b",
            "",
        ),
        (0.60, r"\bi (?:cut|cutted)(?=\s*$| \|)", ""),
        (0.50, r"\b(?:clean|free) (?:from|of) (?:sh|self harm|cutting)\b", ""),
        (0.60, r"\bself harm\b", "s"),
        (0.80, r"\b(?:make|made|making) myself bleed\b", ""),
        (
            0.80,
            r"\b(?:carve|carved|carving|etch|etched|scratch|scratched) (?:\w+ ){0,3}(?:into|on)"
            r" my (?:skin|arms?|wrists?|thighs?|legs?|stomach|hips?|body|forearms?)\b",
            "",
        ),
        (
            0.75,
            r"\b(?:scratch|scratching|scratched|pick|picking) (?:myself|my skin) (?:until|till)"
            r" (?:i|it) (?:bleed|bled|bleeds)\b",
            "",
        ),
        (0.60, r"\b(?:hit|hitting|punch|punching|bang|banging) (?:myself|my head against)\b", ""),
        (0.45, r"\bpunch(?:ing|ed)? (?:the )?walls?\b", "s"),
        (0.60, r"\b(?:starve|starving|starved) myself\b", ""),
        (0.55, r"\bdeserve (?:the )?(?:pain|to hurt|to suffer|to be hurt|to bleed)\b", "s"),
    ],
    "violence_from_others": [
        # a reported threat of serious violence ("said he'd break both my legs")
        (
            0.85,
            r"^(?=.*\b(?:said|says|told me|threatened|swore|swears)\b)(?!.*\b(?:lol|haha\w*|late"
            r"|room|homework|phone|grades|joking|kidding)\b).*?(?:\b(?:he|she|they) (?:will|would|is"
            r" going to|was going to)|\b(?:hell|shell|theyll|hed|shed|theyd)) (?:\w+ ){0,2}(?:break"
            r" (?:both )?my (?:legs|arms|neck|jaw|bones)"
            r"|beat me|stab me|shoot me|burn me|strangle me|choke me)\b",
            "n",
        ),
        (
            0.85,
            r"\b" + _AGENT + r" (?:keeps |always |often |still |has |had |would |used to"
            r" |started |will |is going to |tried to |tries to )?(?:hits|hit|beats|beat"
            r"|punches|punched|kicks|kicked|slaps|slapped|chokes|choked|strangles|strangled"
            r"|rapes|raped|molests|molested|abuses|abused|assaults|assaulted|stabbed|burns"
            r"|whips|whipped|batters|battered|beat up|beats up) (?:my \w+ and "
            r"|both of )?(?:me|us)\b",
            "",
        ),
        (
            0.65,
            r"\b" + _PERSON_AGENT + r" (?:keeps |always |often |still |has |had |would |used to"
            r" |started )?(?:pushes|pushed|shoves|shoved|throws|threw) me (?:around|down|against"
            r"|into|to the (?:floor|ground)|out)\b",
            "",
        ),
        (
            0.65,
            r"\b" + _PERSON_AGENT + r" (?:keeps |always |often |still |has |had |would |used to"
            r" |started |tried to |tries to )?(?:burns|burned|shoves|shoved|attacks|attacked"
            r"|grabs|grabbed|pins|pinned|bites|bit|spits on|spat on) me\b",
            "",
        ),
        (
            0.60,
            r"\b" + _PERSON_AGENT + r" (?:physically )?(?:hurts|hurt) me (?:when|if|every"
            r"|again|physically|badly)\b",
            "",
        ),
        (
            0.90,
            r"\b(?:said|says|told me|tells me|threatened|threatens|threatening|swore|swears"
            r"|promised|keeps saying|warned me)(?: that)?(?: \w+){0,4} (?:kill|hurt|beat|shoot"
            r"|stab|murder|strangle|choke|burn)(?: (?!for\b)\w+){0,3} (?:me|us)\b",
            "n",
        ),
        (
            0.90,
            r"\b(?:kill|hurt|beat|shoot|stab|murder|find) me if i (?:leave|go|tell|call|report"
            r"|talk|say|speak|try|break up|ever|left|told|move out|run)\b",
            "n",
        ),
        (
            0.80,
            r"\b(?:threaten|threatens|threatened|threatening) (?:me|to (?:kill|hurt|beat|shoot"
            r"|stab|post|leak|share|send|take|hit))\b",
            "n",
        ),
        (0.85, r"\b(?:trying|tried|tries|wants|want|wanted) to kill me\b", "n"),
        (
            0.45,
            r"\b(?:he|she|my (?:husband|wife|boyfriend|girlfriend|partner|ex|fiance|fiancee"
            r"|ex husband|ex wife|ex boyfriend|ex girlfriend)) (?:is |are )?(?:going to|will"
            r"|would) kill me\b",
            "n",
        ),
        (
            0.70,
            r"\b(?:he|she|they|someone|somebody|people|my " + _KIN + r") (?:is |are )?(?:going"
            r" to|will|wants to|want to|trying to|tried to|is going to|threatened to) (?:hurt"
            r"|beat|attack|rape|stab|shoot|strangle|choke) me\b",
            "n",
        ),
        (
            0.80,
            r"\bi (?:was|got|get|am|have been|keep getting) (?:hit|beaten|beat|punched|kicked"
            r"|slapped|choked|strangled|attacked|assaulted|abused|raped|stabbed|threatened"
            r"|molested) by (?!(?:a|the) (?:car|bus|truck|bike|ball|wave|train|van|bicycle"
            r"|scooter|motorbike|door|branch))\w+",
            "n",
        ),
        (
            0.65,
            r"\b(?:sending|sent|sends|send|getting|got|get|received|receiving|gives|giving)"
            r" me (?:death )?threats\b|\bdeath threats\b|\bthreatening (?:messages|texts"
            r"|letters|calls|emails|dms)\b",
            "n",
        ),
        (
            0.45,
            r"\b" + _PERSON_AGENT + r" (?:touches|touched|keeps touching|touching) me\b"
            r"(?! (?:deeply|so|with|emotionally|heart|a lot))",
            "n",
        ),
        (0.45, r"\b" + _PERSON_AGENT + r" (?:hurt|hurts|hurting) me(?=\s*$| \|)", "n"),
        (
            0.60,
            r"\b(?:someone|somebody|a man|a guy|a woman|some guy|this guy|a stranger|people"
            r"|he|she|they|my " + _KIN + r"|a car|a van)(?: \w+){0,4} (?:is |are |has been"
            r" |have been |keeps |was |kept )?(?:following|stalking|watching|tracking|stalked"
            r"|followed) me\b",
            "n",
        ),
        (
            0.55,
            r"\b(?:someone|somebody|a man|a guy|a woman|a stranger|people|he|she|they|man|guy"
            r"|my ex|a car|a van) (?:is |are |keeps |has been |was )?(?:standing |waiting"
            r" |sitting |parked |hanging around |showing up )?outside my (?:house|home|door"
            r"|window|apartment|flat|room|work|school)\b",
            "n",
        ),
        (0.60, r"\b(?:being|been|getting|got|was|am) (?:stalked|followed home|threatened)\b", "n"),
        (0.60, r"\b(?:stalking|stalks|stalked) me\b", "n"),
        (
            0.55,
            r"\b(?:scared|afraid|terrified|frightened) (?:to go"
            r"|of going) (?:back )?home\b",
            "n",
        ),
        (
            0.55,
            r"\b(?:scared|afraid|terrified|frightened) of (?:him|her|them|my "
            + _KIN
            + r"|what (?:he|she|they) (?:will|might|would) do)\b",
            "n",
        ),
        (
            0.70,
            r"\b(?:do not|never|cannot) feel safe (?:at home|with (?:him|her|them|my \w+)|in my"
            r" (?:own )?(?:house|home|room))\b",
            "n",
        ),
        (
            0.70,
            r"\b(?:i am )?not safe (?:at home|with (?:him|her|them|my \w+)|here|in my (?:own )?"
            r"(?:house|home))\b",
            "n",
        ),
        (0.65, r"\b(?:locks|locked|locking|lock) me (?:in|out|up)\b", "n"),
        (
            0.60,
            r"\b(?:will not|would not|does not|did not|never) let me (?:leave|go out|see my"
            r" (?:friends|family)|have my phone|eat)\b",
            "n",
        ),
        (0.75, r"\b(?:is|being|was|so|very) abusive\b", "n"),
        (
            0.75,
            r"\babusive (?:husband|wife|partner|boyfriend|girlfriend|relationship|parents?|dad"
            r"|father|mom|mum|mother|home|household|family|ex|stepdad|stepmom)\b",
            "n",
        ),
        (0.55, r"\bdomestic (?:violence|abuse)\b", "s"),
        (
            0.90,
            r"\b(?:forced|forces|forcing|made|makes|pressured|pressures) me (?:to )?(?:have sex"
            r"|do sexual|sleep with|touch|perform)\b",
            "n",
        ),
        (
            0.85,
            r"\bi (?:was|got|have been|had been|am being|am) (?:raped|sexually assaulted"
            r"|sexually abused|molested|groomed)\b",
            "n",
        ),
        (
            0.75,
            r"\bi (?:was|got|have been|had been|am being|am) (?:abused|assaulted|attacked"
            r"|beaten|beat up|stabbed|jumped|mugged|strangled|choked|kidnapped"
            r"|trafficked)\b",
            "n",
        ),
        (
            0.60,
            r"\b(?:touches|touched|touching) me (?:inappropriately|when|at night|there"
            r"|without)\b",
            "n",
        ),
        (
            0.60,
            r"\b(?:told|tell|tells|telling|keep telling|keeps telling|want|wants) me to"
            r" (?:kill myself|kys|die|go die|end my life|end it)\b",
            "n",
        ),
        (0.45, r"\b(?:being|getting|got) (?:bullied|harassed|blackmailed|extorted)\b", "n"),
        (0.70, r"\b(?:blackmailing|blackmails|extorting|sextorting) me\b", "n"),
        (
            0.55,
            r"\b(?:yells|screams|screamed|yelled) at me (?:and|then) (?:hits|throws|breaks"
            r"|smashes|threatens)\b",
            "n",
        ),
    ],
    "violence_to_others": [
        (
            0.65,
            r"\b(?:i |i am )?" + _WANT + r" (?:kill|murder|killing|murdering) " + _TARGET + r"\b",
            "s",
        ),
        (
            0.80,
            r"\b(?:i |i am )?" + _WANT + r" (?:stab|shoot|strangle|poison|run over|choke"
            r"|burn|stabbing|shooting|strangling|poisoning) " + _TARGET + r"\b",
            "s",
        ),
        (
            0.85,
            r"\b(?:i |i am )?" + _WANT + r" (?:hurt|harm|attack|hurting|harming|attacking)"
            r" (?:someone|somebody|people|everyone|everybody|anyone|anybody|others|a (?:child"
            r"|kid|stranger|person)|my (?:baby|kids?|children|child|son|daughter))\b",
            "s",
        ),
        (
            0.65,
            r"\b(?:i |i am )?" + _WANT + r" (?:hurt|harm|attack|hurting|harming|attacking"
            r"|beat up|beating up) " + _TARGET + r"\b",
            "s",
        ),
        (
            0.50,
            r"\b(?:i |i am )?" + _WANT + r" (?:punch|hit|slap|smack|kick|punching|hitting"
            r"|slapping) " + _TARGET + r"\b",
            "s",
        ),
        (0.50, r"\b(?:i |i am )?" + _WANT + r" (?:beat|beating) " + _TARGET + r" up\b", "s"),
        (
            0.85,
            r"\b(?:thoughts?|thinking|urges?|fantasi[sz]e|fantasi[sz]ing|fantasies|dreams?)"
            r" (?:of|about) (?:hurting|killing|harming|stabbing|shooting|murdering|strangling)"
            r" (?:someone|somebody|people|my \w+|him|her|them|others|a \w+|everyone)\b",
            "s",
        ),
        (
            0.80,
            r"\b(?:afraid|scared|worried|terrified) (?:that )?i (?:will|might|am going to|could"
            r"|would) (?:hurt|kill|harm|snap and hurt) (?:someone|somebody|my \w+|him|her|them"
            r"|people|the baby|a \w+|others)\b",
            "n",
        ),
        (
            0.95,
            r"\bshoot up (?:the|my|a|our|this) (?:school|office|work|workplace|place|mall"
            r"|church|class|mosque|synagogue|party|campus)\b",
            "s",
        ),
        (
            0.90,
            r"\b(?:bring|bringing|brought|take|taking|took) (?:a |my |the |dads |his )?"
            r"(?:gun|guns|knife|knives|weapon|rifle|pistol) to (?:school|work|class|the office"
            r"|campus|church)\b",
            "s",
        ),
        (
            0.55,
            r"\bmake (?:him|her|them|everyone|everybody|people|all of them)(?: all)? (?:pay"
            r"|suffer|bleed)"
            r"\b",
            "s",
        ),
        (
            0.50,
            r"\b(?:they|he|she|everyone) (?:will|are going to|is going to) (?:all )?pay for"
            r" (?:this|it|what)\b",
            "s",
        ),
    ],
}

# Only count once their category already has a hit.
BOOSTERS: dict[str, list[tuple[float, str]]] = {
    "suicide": [
        (
            0.30,
            r"\b(?:tonight|today|tomorrow|this weekend|right now|soon|after everyone is"
            r" asleep|on (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)|this week"
            r"|next week)\b",
        ),
        (
            0.40,
            r"\b(?:i have|i got|got|bought|saved|collected|stockpiled|been saving|saving up)"
            r" (?:\w+ ){0,2}(?:pills|rope|gun|razor|razors|blades?|tablets|meds)\b",
        ),
        (
            0.45,
            r"\b(?:will not|wont|do not) (?:be needing|need) (?:them|it|these|those|anything|any of"
            r" (?:it|this|them)|her|him)"
            r"|\bknow (?:exactly )?what it is for\b|\bwhere i am going\b",
        ),
        (
            0.40,
            r"\b(?:pills|rope|gun|razor|blade|knife|tablets|meds) (?:\w+ )?(?:right here|here with"
            r" me|next to me|in front of me|in my hand|on my desk|in my pocket)\b",
        ),
        (
            0.40,
            r"\b(?:have|made|got) a plan\b|\bmy plan\b|\bplanned (?:it|everything|how)\b"
            r"|\bknow how i (?:would|will|am going to)\b",
        ),
        (0.30, r"\b(?:tried|attempted) (?:it )?(?:before|again|last)\b"),
    ],
    "self_harm": [
        (0.50, r"\b(?:knife|blade|razor|razors|blades)\b"),
        (
            0.30,
            r"\b(?:again|deeper|every (?:day|night)|to feel (?:something|better|in control"
            r"|real)|on purpose|deliberately|intentionally|cannot stop|bleeding|stitches)\b",
        ),
    ],
    "violence_from_others": [
        (
            0.30,
            r"\b(?:tonight|right now|he is home|she is home|coming home|gun|knife|weapon"
            r"|bruises?|bleeding|pregnant|kids|children|cannot leave|nowhere to go)\b",
        ),
    ],
    "violence_to_others": [
        (
            0.40,
            r"\b(?:gun|guns|knife|knives|weapon|rifle|pistol|tonight|tomorrow|plan|planned"
            r"|for real|not joking|i mean it|no joke|not kidding)\b",
        ),
    ],
}

_FIRST = frozenset({"i", "me", "my", "myself", "mine", "we", "us", "our"})
_THIRD = frozenset(
    {
        "he",
        "she",
        "they",
        "him",
        "her",
        "his",
        "them",
        "their",
        "hers",
        "someone",
        "somebody",
        "people",
        "friend",
        "friends",
        "brother",
        "sister",
        "mom",
        "mum",
        "dad",
        "mother",
        "father",
        "son",
        "daughter",
        "wife",
        "husband",
        "boyfriend",
        "girlfriend",
        "partner",
        "cousin",
        "character",
        "characters",
        "protagonist",
        "hero",
        "heroine",
        "villain",
        "novel",
        "book",
        "story",
        "movie",
        "film",
        "show",
        "series",
        "episode",
        "game",
        "song",
        "article",
        "news",
        "celebrity",
        "actor",
        "actress",
        "singer",
        "rapper",
        "guy",
        "girl",
        "man",
        "woman",
        "kid",
        "kids",
        "person",
        "student",
        "classmate",
        "coworker",
        "colleague",
        "patient",
        "client",
        "dog",
        "cat",
        "pet",
        "poem",
        "play",
        "anime",
        "manga",
        "documentary",
        "fic",
        "fanfic",
        "author",
        "writer",
        "narrator",
        "uncle",
        "aunt",
        "grandpa",
        "grandma",
        "neighbor",
        "neighbour",
        "roommate",
        "teacher",
        "nobody",
        "everyone",
        "everybody",
        "somebody",
    }
)
_NEGATION_TAIL = re.compile(
    r"\b(?:never|not|no|nor|neither|wont|cannot|nothing makes me)"
    r"(?! (?:stop|help|shake|escape|get rid|resist|wait|seem to stop|control|handle|cope|take"
    r" it|bear|anymore|one|longer|reason|point|sure)\b)"
    r"(?: (?!(?:why|if|but|how|when|because|and|or|what|that|who|where|unless|until|so|though"
    r"|anymore|now|then)\b)[a-z]+){0,3} $"
)
_REPORTED_TAIL = re.compile(
    r"\b(?:told|tell|tells|telling|want|wants|wanted|said|says|saying"
    r"|dared|asked) me to $|\b(?:said|says|saying) (?:that )?i should $"
    r"|\btold me (?:that )?i should $"
)
_PAST = re.compile(
    r"\b(?:used to|last year|last summer|\d+ years ago|when i was (?:a kid|little|young|younger|a child|a teen"
    r"|a teenager|in school|\d+)|as a (?:kid|child|teen|teenager)|years ago"
    r"|in the past|back in (?:high school|school|college|the day)|a long time ago"
    r"|i am \d+ (?:days|weeks|months|years) clean)\b"
)
_NOT_PAST = re.compile(
    r"\b(?:now|again|still|lately|these days|today|tonight|anymore|recently"
    r"|relapsed|back)\b"
)


# The names the screen reads from every language's table.
FIRST = _FIRST
THIRD = _THIRD
NEGATION_TAIL = _NEGATION_TAIL
REPORTED_TAIL = _REPORTED_TAIL
PAST = _PAST
NOT_PAST = _NOT_PAST
MEDIA = re.compile(
    r"\b(?:novel|book|story|storie|film|movie|show|series|episode|season|character"
    r"|protagonist|article|news|essay|paper|thesis|class|lecture|documentary"
    r"|podcast|play|poem|song|lyric|game|campaign|prevention|awareness|rate"
    r"|statistic|research|study|studie|history|fiction|fanfic|author|writer"
    r"|narrator|volunteer|hotline|crisis line|paramedic|nurse|nursing|course|patient|case|boss fight"
    r"|level|quest|mission|gta|minecraft|fortnite|roblox|gameplay|speedrun)s?\b"
)
# Function words that tell the language of a message (see screen._languages).
STOPWORDS = frozenset(
    {
        "i",
        "im",
        "you",
        "the",
        "and",
        "to",
        "my",
        "me",
        "is",
        "am",
        "are",
        "it",
        "of",
        "an",
        "in",
        "that",
        "this",
        "was",
        "have",
        "just",
        "so",
        "not",
        "dont",
        "cant",
        "what",
        "with",
        "for",
        "be",
        "ive",
        "myself",
        "been",
        "about",
        "all",
        "would",
        "want",
        "going",
        "at",
        "he",
        "she",
        "they",
        "we",
        "do",
        "did",
        "if",
        "but",
        "no",
        "up",
        "out",
        "its",
        "wanna",
        "gonna",
        "u",
        "ur",
        "when",
        "after",
        "from",
        "again",
        "really",
        "will",
        "can",
        "how",
    }
)
