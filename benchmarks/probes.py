"""Queries an index cannot answer, for measuring relevance thresholds
(:mod:`benchmarks.thresholds`): nonsense (random letters, seeded) and off-topic questions
(everyday subjects — cooking, sport, health, money, pets, travel, music, law — that neither
Cranfield's aeronautics nor CISI's library science answers).

Each kind comes in two disjoint parts: ``tune`` (the calibration is fitted on it, with
Cranfield) and ``held-out`` (reported, with CISI). The off-topic questions were written for
this benchmark, the held-out ones apart from the tuning ones and never read by the fit.

Example:
    >>> nonsense(3, seed=1) == nonsense(3, seed=1), len(OFF_TOPIC["held-out"]) >= 60
    (True, True)
"""

from __future__ import annotations

import random
import string

NONSENSE_SEEDS = {"tune": 11, "held-out": 29}

OFF_TOPIC: dict[str, tuple[str, ...]] = {
    "tune": (
        "how long should I boil an egg for a runny yolk",
        "best pizza dough recipe with fresh yeast",
        "who won the football world cup in 2014",
        "how to train a puppy to stop biting",
        "symptoms of vitamin D deficiency in adults",
        "cheapest time of year to fly to Japan",
        "how to make a sourdough starter from scratch",
        "what is the capital of Australia",
        "lyrics of a famous Beatles song about a submarine",
        "how do I lower my monthly electricity bill",
        "best exercises to strengthen lower back muscles",
        "how to remove a red wine stain from a carpet",
        "what time does the supermarket close on Sunday",
        "how many calories are in a banana",
        "tips for a first job interview",
        "how to grow tomatoes on a balcony",
        "difference between a cold and the flu",
        "when was the Eiffel Tower built",
        "how to tie a tie in a double windsor knot",
        "recommended daily water intake for children",
        "how to apply for a passport renewal",
        "best hiking trails in the Alps for beginners",
        "how to knit a scarf for beginners",
        "what should I feed a pet rabbit",
        "how to calculate tax on freelance income",
        "chocolate chip cookie recipe without eggs",
        "rules of chess for castling",
        "how to fix a leaking kitchen tap",
        "which vaccines does a kitten need",
        "how to meditate to reduce anxiety",
        "plot summary of Romeo and Juliet",
        "how to change a flat bicycle tyre",
        "best way to learn Spanish quickly",
        "how long does it take to walk a marathon",
        "what wine goes with grilled salmon",
        "how to get rid of ants in the kitchen",
        "how often should I water a cactus",
        "tenant rights when the landlord keeps the deposit",
        "how to make cold brew coffee at home",
        "what causes migraine headaches",
        "how to save money for a house deposit",
        "famous paintings by Vincent van Gogh",
        "how to clean a cast iron frying pan",
        "best board games for a family evening",
        "how to prepare for a driving test",
        "how much sleep does a teenager need",
        "how to write a wedding speech",
        "recipe for vegetable curry with coconut milk",
        "how to stop a dog barking at night",
        "which football club has won the most league titles",
        "how to treat a sprained ankle at home",
        "ideas for a child's birthday party",
        "how to paint a bedroom wall without streaks",
        "what is the offside rule in football",
        "how to budget for a family holiday",
        "how to make homemade ice cream without a machine",
        "when do cherry trees blossom in spring",
        "how to care for a newborn baby's skin",
        "best songs for a running playlist",
        "how to divorce amicably and share custody",
        "how to make pancakes fluffy",
        "who painted the ceiling of the Sistine Chapel",
        "how to reduce sugar cravings",
        "what to pack for a beach holiday",
    ),
    "held-out": (
        "how to roast a chicken with crispy skin",
        "who holds the record for most tennis grand slams",
        "how to house train an adult cat",
        "early signs of type 2 diabetes",
        "cheap places to stay in Lisbon",
        "how to make fresh pasta by hand",
        "what is the tallest mountain in Africa",
        "how to play the guitar chord G major",
        "how to improve my credit score fast",
        "yoga poses for tight hamstrings",
        "how to get chewing gum out of hair",
        "opening hours of the post office on Saturday",
        "how much protein is in an egg",
        "how to ask for a pay rise",
        "when to plant garlic in the garden",
        "is it safe to exercise with a fever",
        "who was the first emperor of Rome",
        "how to fold a fitted sheet",
        "best breakfast for a toddler",
        "how to renew a driving licence online",
        "best ski resorts for families",
        "how to crochet a granny square",
        "how often to feed a goldfish",
        "how to file a tax return as a pensioner",
        "banana bread recipe with walnuts",
        "how does the scoring work in tennis",
        "how to unclog a shower drain",
        "how often should a dog see the vet",
        "breathing exercises for falling asleep",
        "summary of the plot of Hamlet",
        "how to adjust the brakes on a mountain bike",
        "fastest way to learn to touch type",
        "how many steps a day should I walk",
        "which cheese goes with red wine",
        "how to keep slugs off lettuce",
        "how to repot an orchid",
        "can my landlord raise the rent mid contract",
        "how to froth milk for a cappuccino",
        "what helps with a sore throat",
        "how to start investing in index funds",
        "famous sculptures by Michelangelo",
        "how to sharpen a kitchen knife",
        "card games for two players",
        "tips for parallel parking",
        "how long should a toddler nap",
        "how to write a eulogy for a grandparent",
        "recipe for lentil soup",
        "how to stop a cat scratching furniture",
        "which country has won the most olympic medals",
        "how to ice a bruised knee",
        "games for a rainy afternoon with kids",
        "how to wallpaper a room",
        "how many players are on a rugby team",
        "how to plan a road trip on a budget",
        "how to make strawberry jam",
        "when do swallows migrate in autumn",
        "how to bathe a newborn baby",
        "best love songs of the eighties",
        "how to write a will without a lawyer",
        "how to make crispy roast potatoes",
        "who composed the four seasons violin concertos",
        "how to quit smoking for good",
        "what to bring on a camping trip",
    ),
}


def nonsense(count: int, seed: int) -> tuple[str, ...]:
    """``count`` queries of 1–4 random 'words' of 3–9 lowercase letters (``zzzz qqqq``),
    the same for the same ``seed``."""
    draw = random.Random(seed)
    return tuple(
        " ".join(
            "".join(draw.choice(string.ascii_lowercase) for _ in range(draw.randint(3, 9)))
            for _ in range(draw.randint(1, 4))
        )
        for _ in range(count)
    )
