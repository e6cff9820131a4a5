"""Hand-written answers for the gate: short and reworded correct answers, and the same
answers with one invented detail, each over a one-document context.

Two disjoint lists, written for issue 48 by the gate engineer before any of them was
scored: ``BENCHMARK`` (the benchmark's short-answer set: its pass rate at the shipped
default is a target) and ``CALIBRATION`` (copied into the shipped calibration set,
``camab_rag/data/calibration.jsonl``, so never reported). Each case is ``(context,
question, correct answer, invented answer)``; a ``question`` that starts with ``And`` is a
follow-up ("And how long is its warranty?"), answered from the document alone.
"""

from __future__ import annotations

Case = tuple[str, str, str, str]

BENCHMARK: list[Case] = [
    (
        "All Lumora kettles come with a 2-year warranty. Teapots have a 1-year warranty "
        "against manufacturing defects.",
        "How long is the teapot warranty?",
        "Teapots have a 1-year warranty.",
        "Teapots have a 5-year warranty.",
    ),
    (
        "The Glass Teapot holds 0.8 litres and costs €29. It is dishwasher safe.",
        "How much is the glass teapot?",
        "It costs €29.",
        "It costs €45.",
    ),
    (
        "Our Tallinn showroom is open from 10 am to 4 pm on Saturdays and closed on Sundays.",
        "When is the showroom open on Saturdays?",
        "From 10 am to 4 pm.",
        "From 8 am to 9 pm.",
    ),
    (
        "Returns are accepted within 30 days of delivery if the item is unused and in its "
        "original packaging.",
        "How long do I have to return an item?",
        "30 days from delivery.",
        "14 days from delivery.",
    ),
    (
        "Standard shipping within Estonia takes 2 to 3 working days and is free for orders "
        "over €50.",
        "Is shipping free?",
        "Yes, for orders over €50.",
        "Yes, for orders over €20.",
    ),
    (
        "The Aero kettle boils 1.7 litres of water in about four minutes and switches off "
        "automatically.",
        "How much water does the Aero kettle hold?",
        "1.7 litres.",
        "2.5 litres.",
    ),
    (
        "Customer service can be reached by email at help@lumora.example or by phone on "
        "weekdays between 9:00 and 17:00.",
        "How can I contact customer service?",
        "By email or by phone on weekdays.",
        "By phone on +372 555 1234 around the clock.",
    ),
    (
        "The company was founded in 2011 by Maarja Kask in Tartu and moved its head office "
        "to Tallinn in 2018.",
        "Who founded the company?",
        "Maarja Kask.",
        "Kristjan Tamm.",
    ),
    (
        "The company was founded in 2011 by Maarja Kask in Tartu and moved its head office "
        "to Tallinn in 2018.",
        "Where is the head office?",
        "In Tallinn, since 2018.",
        "In Riga, since 2018.",
    ),
    (
        "Ceramic mugs are sold in sets of four. Each mug holds 350 ml and is microwave safe.",
        "How many mugs are in a set?",
        "Four.",
        "Six.",
    ),
    (
        "Gift cards are valid for 12 months from the date of purchase and can be used online "
        "and in stores.",
        "How long is a gift card valid?",
        "A year from purchase.",
        "Three years from purchase.",
    ),
    (
        "The Varnholt Bridge was opened in 1927. It was designed by the engineer Ilse Marten "
        "and is 412 metres long.",
        "How long is the Varnholt Bridge?",
        "It is 412 metres long.",
        "It is 950 metres long.",
    ),
    (
        "The Varnholt Bridge was opened in 1927. It was designed by the engineer Ilse Marten "
        "and is 412 metres long.",
        "Who designed the bridge?",
        "The engineer Ilse Marten.",
        "The architect Jonas Berg.",
    ),
    (
        "Kelby's lantern festival takes place every October on the harbour front and ends "
        "with fireworks.",
        "When is the lantern festival?",
        "Every October.",
        "Every March.",
    ),
    (
        "The museum's main hall has a maximum capacity of 250 people. Guided tours start "
        "every hour.",
        "How many people fit in the main hall?",
        "Up to 250 people.",
        "Up to 100 people.",
    ),
    (
        "The museum's main hall has a maximum capacity of 250 people. Guided tours start "
        "every hour.",
        "How often do guided tours start?",
        "Hourly.",
        "Every fifteen minutes.",
    ),
    (
        "Members get a 10% discount on all purchases and free delivery on every order.",
        "What discount do members get?",
        "10% off everything.",
        "25% off everything.",
    ),
    (
        "The river Emsa flows north through Kelby and reaches the sea at the port of Haverlund.",
        "Where does the river Emsa reach the sea?",
        "At Haverlund.",
        "At Westhaven.",
    ),
    (
        "Passwords must be at least 12 characters long and contain a number.",
        "How long must a password be?",
        "At least 12 characters.",
        "At least 8 characters.",
    ),
    (
        "The library lends up to six books at a time for three weeks; renewals are free.",
        "How long can I keep a book?",
        "Three weeks.",
        "Two months.",
    ),
    (
        "Our cafe serves breakfast until 11:30 and lunch from 12:00 to 15:00.",
        "Until when is breakfast served?",
        "Until 11:30.",
        "Until 13:00.",
    ),
    (
        "The Orion 2 telescope weighs 4.2 kg and ships with two eyepieces and a tripod.",
        "What comes with the Orion 2 telescope?",
        "Two eyepieces and a tripod.",
        "A camera mount and a carry case.",
    ),
    (
        "All Lumora kettles come with a 2-year warranty. Teapots have a 1-year warranty "
        "against manufacturing defects.",
        "And how long is the kettle warranty?",
        "Two years.",
        "Ten years.",
    ),
    (
        "The Glass Teapot holds 0.8 litres and costs €29. It is dishwasher safe.",
        "And can it go in the dishwasher?",
        "Yes, it is dishwasher safe.",
        "No, it must be washed by hand.",
    ),
]

CALIBRATION: list[Case] = [
    (
        "The Nordic Pan is made of cast iron, weighs 2.1 kg and costs €39.",
        "What is the pan made of?",
        "Cast iron.",
        "Stainless steel.",
    ),
    (
        "The Nordic Pan is made of cast iron, weighs 2.1 kg and costs €39.",
        "And what does it cost?",
        "It is €39.",
        "It is €79.",
    ),
    (
        "Click-and-collect orders are ready at the Parnu store within 2 hours.",
        "How fast can I collect my order?",
        "Within two hours.",
        "Within two days.",
    ),
    (
        "The Harbour Line ferry leaves Kelby at 7:15 and reaches Haverlund at 9:40.",
        "When does the ferry arrive?",
        "At 9:40.",
        "At 11:05.",
    ),
    (
        "The observatory on Mount Ardel was built in 1964 and is run by the University of Kelby.",
        "Who runs the observatory?",
        "The University of Kelby.",
        "The Royal Astronomy Society.",
    ),
    (
        "Tickets for children under 7 are free; adults pay €12.",
        "Do small children need a ticket?",
        "No, it is free under 7.",
        "Yes, they pay €6.",
    ),
    (
        "The Linden Chair is made from oak and is available in natural and black finishes.",
        "Which finishes are there?",
        "Natural or black.",
        "White or walnut.",
    ),
    (
        "Our support team answers chat messages within 5 minutes during office hours.",
        "How quickly does the chat reply?",
        "In under five minutes.",
        "In under 24 hours, signed by manager Peeter Saar.",
    ),
]
