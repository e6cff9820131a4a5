"""A blind, hand-written test set for the groundedness gate (issue 48).

Who, when, how: written by hand on 2026-11-28 by one engineer session of the camab-rag
project (the ``writer`` worktree), in one sitting, without reading the gate's code, its
word rules, the earlier hand-written sets, their results or the calibration data, and
without running the gate or any model on these cases. No case was revised after any tool
judged it; others measure the set once.

What: :data:`FRESH` holds 60 one-document cases, 15 of each ``kind``:

* ``short`` -- a 1-5 word answer;
* ``paraphrase`` -- one sentence saying the document's fact in other words;
* ``followup`` -- a chat follow-up whose earlier turns are in ``history``;
* ``mixed`` -- a two-sentence answer joining two facts of the document, one reworded.

Each case is ``{"kind", "domain", "context", "question", "right", "invented", "history"}``:
``right`` is fully supported by ``context`` (some need one careful step of reasoning, such
as "weekends" covering Saturday); ``invented`` is the same answer with exactly one checkable
detail made wrong (a number, date, time, name, place, weekday or a flipped negation).
``domain`` is a label for counting only.

:data:`FRESH_MULTI` holds 10 cases whose ``contexts`` are 4-5 documents from one site:
``source`` is the index of the document supporting ``right``, ``stale`` the index of an
older page stating a different value (``None`` if there is none); ``invented`` may use the
stale value.

Names, places and organisations are invented. Licence: written for this project, CC0
(public domain dedication).
"""

from __future__ import annotations

from typing import Any


def _case(
    kind: str,
    domain: str,
    context: str,
    question: str,
    right: str,
    invented: str,
    history: list[dict[str, str]] | None = None,
) -> dict[str, Any]:
    """One single-document case as a plain dict (see the module docstring)."""
    return {
        "kind": kind,
        "domain": domain,
        "context": context,
        "question": question,
        "right": right,
        "invented": invented,
        "history": history or [],
    }


def _turns(*pairs: tuple[str, str]) -> list[dict[str, str]]:
    """Earlier chat exchanges (user, assistant) as role/content messages."""
    out: list[dict[str, str]] = []
    for user, assistant in pairs:
        out.append({"role": "user", "content": user})
        out.append({"role": "assistant", "content": assistant})
    return out


_SHORT = [
    _case(
        "short",
        "clinic",
        "Ridgeway Family Clinic is open Monday to Friday from 8:00 to 18:30 and on Saturdays "
        "from 9:00 to 12:00. It is closed on Sundays and public holidays.",
        "Can I come in on Saturday afternoon?",
        "No, only until noon.",
        "No, only until 2 pm.",
    ),
    _case(
        "short",
        "library",
        "Members of Harlow Public Library may borrow up to 12 items at a time. Books are lent "
        "for three weeks and DVDs for one week.",
        "How long can I keep a DVD?",
        "One week.",
        "Two weeks.",
    ),
    _case(
        "short",
        "train",
        "Trains from Mellick Central to Port Aven leave every 40 minutes from 6:10 until "
        "22:50. The journey takes about 55 minutes.",
        "How long is the ride to Port Aven?",
        "About 55 minutes.",
        "About 35 minutes.",
    ),
    _case(
        "short",
        "hotel",
        "Check-in at the Linden Court Hotel starts at 3 pm and check-out is until 11 am. Late "
        "check-out until 1 pm costs 25 euros.",
        "What does late check-out cost?",
        "25 euros.",
        "35 euros.",
    ),
    _case(
        "short",
        "bank",
        "Cards reported lost to Northfold Bank are blocked immediately, and a replacement card "
        "is posted within 5 working days at no charge.",
        "Do I have to pay for the replacement card?",
        "No, it's free.",
        "Yes, there's a fee.",
    ),
    _case(
        "short",
        "school",
        "At Brookvale Primary School the autumn term begins on Tuesday 2 September and ends "
        "on Friday 19 December. Parents' evening is held on Thursday 16 October.",
        "When is parents' evening?",
        "Thursday, 16 October.",
        "Thursday, 23 October.",
    ),
    _case(
        "short",
        "sports club",
        "The Eastbrook Rowing Club's junior squad trains on Wednesdays at 17:30 and on "
        "Saturdays at 8:00. Junior membership costs 90 pounds a year.",
        "Which days do the juniors train?",
        "Wednesdays and Saturdays.",
        "Wednesdays and Sundays.",
    ),
    _case(
        "short",
        "city council",
        "Bulky waste collection in Tarnwick must be booked with the city council at least 7 "
        "days in advance. Each collection of up to 5 items costs 30 euros.",
        "How many items can one collection take?",
        "Up to five.",
        "Up to eight.",
    ),
    _case(
        "short",
        "software docs",
        "The `sync` command retries a failed upload three times before giving up. Use the "
        "`--retries` flag to change this number; the maximum allowed value is 10.",
        "What's the highest value --retries accepts?",
        "Ten.",
        "Twenty.",
    ),
    _case(
        "short",
        "recipe",
        "Bake the loaf at 220°C for 35 minutes, then lower the oven to 200°C and bake for "
        "another 10 minutes.",
        "What temperature do I start the oven at?",
        "220 degrees Celsius.",
        "250 degrees Celsius.",
    ),
    _case(
        "short",
        "science",
        "Sodium chloride, common table salt, melts at 801 °C and boils at 1,465 °C.",
        "At what temperature does table salt melt?",
        "801 °C.",
        "901 °C.",
    ),
    _case(
        "short",
        "history",
        "The town charter of Velmora was granted in 1284 by Count Aldric the Elder, who also "
        "ordered the building of its first stone wall.",
        "Who granted Velmora its charter?",
        "Count Aldric the Elder.",
        "Count Aldric the Younger.",
    ),
    _case(
        "short",
        "geography",
        "Lake Orrin, the largest lake in the province of Caltera, covers 212 square kilometres "
        "and reaches a depth of 68 metres.",
        "How deep is Lake Orrin?",
        "68 metres.",
        "86 metres.",
    ),
    _case(
        "short",
        "insurance",
        "Under the Homeguard Basic policy, water damage from burst pipes is covered, but "
        "damage caused by gradual leaks or by flooding is not covered.",
        "Is flood damage covered?",
        "No, it isn't.",
        "Yes, it is.",
    ),
    _case(
        "short",
        "gym",
        "PulseFit Arena opens at 6 am on weekdays and at 8 am on weekends. The sauna is "
        "available to Premium members only.",
        "What time does the gym open on Saturday?",
        "At 8 am.",
        "At 6 am.",
    ),
]

_PARAPHRASE = [
    _case(
        "paraphrase",
        "pharmacy",
        "Prescriptions submitted online to Corran Street Pharmacy are normally ready for "
        "collection after two working days. Controlled medicines must be collected in person "
        "with photo ID.",
        "How soon can I pick up a prescription I ordered online?",
        "It is usually ready to be picked up after two business days.",
        "It is usually ready to be picked up after four business days.",
    ),
    _case(
        "paraphrase",
        "bus",
        "Route 14 buses do not run on Sundays. On Saturdays the first bus leaves Quarry Lane "
        "at 07:45.",
        "What time is the first Saturday bus from Quarry Lane?",
        "On Saturdays the earliest departure from Quarry Lane is at a quarter to eight in the "
        "morning.",
        "On Saturdays the earliest departure from Quarry Lane is at a quarter past eight in "
        "the morning.",
    ),
    _case(
        "paraphrase",
        "hotel",
        "Pets are not permitted in guest rooms at the Saltmarsh Inn, with the exception of "
        "registered assistance dogs.",
        "Can I bring my cat to my room?",
        "Sorry, animals are forbidden in the rooms; the only exception is registered "
        "assistance dogs.",
        "Yes, animals are welcome in the rooms, not only registered assistance dogs.",
    ),
    _case(
        "paraphrase",
        "bank",
        "Transfers made after 16:00 on a working day are processed on the next working day.",
        "If I send money at 5 pm on a Monday, when is it processed?",
        "As that is past the 4 pm cut-off, the transfer will be handled on Tuesday.",
        "As that is past the 4 pm cut-off, the transfer will be handled on Wednesday.",
    ),
    _case(
        "paraphrase",
        "library",
        "Overdue books are charged at 20 cents per day, up to a maximum of 5 euros per item.",
        "What's the most I'd pay for one late book?",
        "The late fee for a single item is capped at €5.00.",
        "The late fee for a single item is capped at €15.00.",
    ),
    _case(
        "paraphrase",
        "school",
        "Students who are absent from the final exam must submit a medical certificate within "
        "10 days to be allowed a resit.",
        "I missed the final exam. How do I get a resit?",
        "You have ten days to hand in a doctor's note, and then you can retake the exam.",
        "You have fourteen days to hand in a doctor's note, and then you can retake the exam.",
    ),
    _case(
        "paraphrase",
        "train",
        "Bicycles may be taken on regional trains free of charge outside peak hours (before "
        "7:00 and after 9:00 on weekdays, all day at weekends).",
        "Can I bring my bike on a regional train on Saturday morning?",
        "Yes, at weekends your bike travels with you for nothing at any time of day.",
        "Yes, at weekends your bike travels with you for 2 euros at any time of day.",
    ),
    _case(
        "paraphrase",
        "software docs",
        "By default, the client waits 30 seconds for a server response before raising a "
        "TimeoutError. You can change this with the `timeout` argument.",
        "How long does the client wait before timing out?",
        "Unless you set the timeout argument, it gives the server half a minute to answer "
        "before it raises a TimeoutError.",
        "Unless you set the timeout argument, it gives the server a full minute to answer "
        "before it raises a TimeoutError.",
    ),
    _case(
        "paraphrase",
        "science",
        "Water boils at 100 °C at sea level, but at the summit of Mount Kessel (4,100 m) it "
        "boils at about 86 °C because the air pressure is lower.",
        "Why is the boiling point different on top of Mount Kessel?",
        "Because the air pressure up there is reduced, water boils at roughly 86 degrees "
        "instead of 100.",
        "Because the air pressure up there is reduced, water boils at roughly 96 degrees "
        "instead of 100.",
    ),
    _case(
        "paraphrase",
        "geography",
        "The river Almse rises in the Dorven Hills and flows 340 kilometres north before "
        "entering the Grey Sea at the port of Skellin.",
        "Where does the Almse reach the sea?",
        "After a northward course of 340 km it runs into the Grey Sea at Skellin, a port town.",
        "After a southward course of 340 km it runs into the Grey Sea at Skellin, a port town.",
    ),
    _case(
        "paraphrase",
        "history",
        "The Treaty of Oberlin was signed on 3 May 1761, ending the eight-year war between "
        "Carsland and the Duchy of Vell.",
        "When did the war between Carsland and Vell end?",
        "It was brought to an end by the Treaty of Oberlin, signed on the third of May 1761.",
        "It was brought to an end by the Treaty of Oberlin, signed on the third of March 1761.",
    ),
    _case(
        "paraphrase",
        "insurance",
        "Claims must be reported within 30 days of the incident. Claims reported later may be "
        "refused.",
        "Is there a deadline for reporting a claim?",
        "Yes, you must tell the insurer no more than thirty days after the incident happened.",
        "Yes, you must tell the insurer no more than sixty days after the incident happened.",
    ),
    _case(
        "paraphrase",
        "gym",
        "Personal training sessions must be cancelled at least 24 hours in advance; otherwise "
        "the full fee is charged.",
        "What happens if I cancel my session on the same morning?",
        "You'll be charged the whole fee, because cancellations need a day's notice.",
        "You'll be charged half the fee, because cancellations need a day's notice.",
    ),
    _case(
        "paraphrase",
        "city council",
        "The recycling centre on Farrow Road is open Tuesday to Sunday, 8:00-17:00. It is "
        "closed on Mondays.",
        "Does the recycling centre open on Mondays?",
        "No, Monday is its closing day; on the other days it is open from 8 in the morning "
        "until 5 in the afternoon.",
        "No, Monday is its closing day; on the other days it is open from 8 in the morning "
        "until 7 in the evening.",
    ),
    _case(
        "paraphrase",
        "clinic",
        "Blood tests at the Alder Medical Centre are taken between 7:30 and 10:00. Patients "
        "should not eat for 12 hours beforehand, but may drink water.",
        "Can I drink anything before my blood test?",
        "Water is fine, but you have to go without food for twelve hours before the test.",
        "Water is fine, but you have to go without food for eight hours before the test.",
    ),
]

_FOLLOWUP = [
    _case(
        "followup",
        "train",
        "Mellick-Port Aven line: on weekdays the first train leaves at 5:40 and the last at "
        "23:10. On Sundays the first train leaves at 8:15 and the last at 21:30.",
        "And on Sundays?",
        "On Sundays the first one leaves at 8:15.",
        "On Sundays the first one leaves at 8:45.",
        _turns(
            (
                "When is the first train to Port Aven on weekdays?",
                "The first weekday train leaves at 5:40.",
            )
        ),
    ),
    _case(
        "followup",
        "library",
        "Harlow Library study rooms can be booked for up to 3 hours per day. Bookings open 7 "
        "days in advance through the library website.",
        "For how long?",
        "Up to three hours a day.",
        "Up to four hours a day.",
        _turns(
            (
                "Can I book a study room at the library?",
                "Yes, you can book a study room through the library website.",
            )
        ),
    ),
    _case(
        "followup",
        "hotel",
        "Breakfast at the Linden Court Hotel is served from 6:30 to 10:00 on weekdays and "
        "from 7:30 to 11:00 on weekends. It costs 18 euros for guests without a breakfast "
        "package.",
        "What about Saturday?",
        "On Saturday it's served from 7:30 until 11.",
        "On Saturday it's served from 7:30 until 12.",
        _turns(
            (
                "What time is breakfast?",
                "On weekdays breakfast is served from 6:30 to 10:00.",
            )
        ),
    ),
    _case(
        "followup",
        "bank",
        "Northfold Bank's Everyday account has no monthly fee for customers under 26. Other "
        "customers pay 4 euros per month, which is waived if at least 1,500 euros is paid in "
        "each month.",
        "Is there any way to avoid that?",
        "Yes, the fee is waived if you pay in at least 1,500 euros every month.",
        "Yes, the fee is waived if you pay in at least 2,500 euros every month.",
        _turns(
            (
                "I'm 30. Does the Everyday account cost anything?",
                "Yes, for customers aged 26 or over it costs 4 euros per month.",
            )
        ),
    ),
    _case(
        "followup",
        "clinic",
        "Flu vaccinations are offered free to patients aged 65 and over and to pregnant "
        "women. Other patients can get the vaccine for 15 euros. Appointments run from "
        "October to December.",
        "When can I book it?",
        "Appointments run from October through December.",
        "Appointments run from September through December.",
        _turns(
            (
                "I'm 40. Can I get a flu jab?",
                "Yes, patients under 65 who are not pregnant can get it for 15 euros.",
            )
        ),
    ),
    _case(
        "followup",
        "sports club",
        "Tennis courts at the Eastbrook Club can be booked by members up to 14 days ahead and "
        "by guests up to 2 days ahead. Floodlit evening play costs an extra 6 pounds per "
        "hour.",
        "And guests?",
        "Guests can only book two days ahead.",
        "Guests can only book five days ahead.",
        _turns(
            (
                "How far ahead can members book a tennis court?",
                "Members can book up to 14 days ahead.",
            )
        ),
    ),
    _case(
        "followup",
        "software docs",
        "To install the Tessel CLI, run `pip install tessel-cli`. It requires Python 3.9 or "
        "newer. On Windows, add the Scripts folder to your PATH.",
        "Will it work with Python 3.8?",
        "No, it needs Python 3.9 or later.",
        "No, it needs Python 3.10 or later.",
        _turns(
            (
                "How do I install the Tessel CLI?",
                "Run pip install tessel-cli.",
            )
        ),
    ),
    _case(
        "followup",
        "recipe",
        "For the lentil soup, simmer the lentils for 25 minutes, then add the spinach and "
        "cook for 3 more minutes. Serves four.",
        "Then what?",
        "Then stir in the spinach and cook it for another three minutes.",
        "Then stir in the kale and cook it for another three minutes.",
        _turns(
            (
                "How long do the lentils simmer for the soup?",
                "Simmer them for 25 minutes.",
            )
        ),
    ),
    _case(
        "followup",
        "city council",
        "Residents' parking permits in the Old Quarter cost 80 euros per year for the first "
        "car and 150 euros for a second car. Applications are handled by the city council's "
        "parking office.",
        "What if we have two cars?",
        "The permit for the second car is 150 euros a year.",
        "The permit for the second car is 160 euros a year.",
        _turns(
            (
                "How much is a residents' parking permit in the Old Quarter?",
                "The permit for the first car costs 80 euros a year.",
            )
        ),
    ),
    _case(
        "followup",
        "gym",
        "PulseFit Arena group classes: spinning on Mondays and Thursdays at 19:00, yoga on "
        "Tuesdays at 18:00 and on Sundays at 10:00.",
        "Is the Sunday one in the morning?",
        "Yes, it starts at 10 am.",
        "Yes, it starts at 11 am.",
        _turns(
            (
                "When is yoga?",
                "Yoga is on Tuesdays at 18:00 and on Sundays at 10:00.",
            )
        ),
    ),
    _case(
        "followup",
        "insurance",
        "Travelsafe policies cover trips of up to 45 days. Winter sports are covered only if "
        "you buy the Snow add-on for 29 euros.",
        "How much is it?",
        "The Snow add-on costs 29 euros.",
        "The Snow add-on costs 39 euros.",
        _turns(
            (
                "How long a trip does Travelsafe cover?",
                "Trips of up to 45 days.",
            ),
            (
                "I'm going skiing. Am I covered?",
                "Only if you buy the Snow add-on.",
            ),
        ),
    ),
    _case(
        "followup",
        "school",
        "The Brookvale school bus collects pupils at Mill Green at 7:50 and at the church at "
        "8:05. Pupils must show their bus pass every morning.",
        "And at the church?",
        "There it comes at 8:05.",
        "There it comes at 8:35.",
        _turns(
            (
                "What time does the school bus come to Mill Green?",
                "It collects pupils at Mill Green at 7:50.",
            )
        ),
    ),
    _case(
        "followup",
        "geography",
        "Mount Serrel, at 2,918 metres, is the highest peak of the Varn range. Its summit is "
        "usually reached from the village of Ostia Alta in about six hours.",
        "Where do people usually start the climb?",
        "From the village of Ostia Alta; the summit takes about six hours from there.",
        "From the village of Ostia Bassa; the summit takes about six hours from there.",
        _turns(
            (
                "How high is Mount Serrel?",
                "It is 2,918 metres high.",
            )
        ),
    ),
    _case(
        "followup",
        "history",
        "The Velmora lighthouse was built in 1872 and automated in 1961. It was "
        "decommissioned in 2004 and now houses a small maritime archive.",
        "Is it still working?",
        "No, it was decommissioned in 2004.",
        "No, it was decommissioned in 2014.",
        _turns(
            (
                "When was the Velmora lighthouse built?",
                "It was built in 1872.",
            )
        ),
    ),
    _case(
        "followup",
        "vet",
        "Greenpaws Veterinary Practice vaccinates puppies at 8 and 12 weeks of age, with a "
        "booster at 12 months. Each vaccination visit costs 45 euros.",
        "And the second one?",
        "At 12 weeks.",
        "At 16 weeks.",
        _turns(
            (
                "When should my puppy get its first vaccination?",
                "At 8 weeks of age.",
            )
        ),
    ),
]

_MIXED = [
    _case(
        "mixed",
        "clinic",
        "Dr Helena Ortega sees patients at the Ridgeway Family Clinic on Tuesdays and "
        "Thursdays. Appointments last 15 minutes and can be booked by phone on 0412 555 019.",
        "When can I see Dr Ortega, and how long is an appointment?",
        "Dr Ortega is at the clinic on Tuesdays and Thursdays. Each appointment lasts a "
        "quarter of an hour.",
        "Dr Ortega is at the clinic on Tuesdays and Fridays. Each appointment lasts a "
        "quarter of an hour.",
    ),
    _case(
        "mixed",
        "library",
        "Harlow Library's children's story hour takes place every Saturday at 10:30 in the "
        "Garden Room. It is free and no booking is needed.",
        "Tell me about story hour.",
        "Story hour is on Saturdays at half past ten in the Garden Room. You don't have to "
        "book, and there is no charge.",
        "Story hour is on Saturdays at half past ten in the Reading Room. You don't have to "
        "book, and there is no charge.",
    ),
    _case(
        "mixed",
        "ferry",
        "The Kestrel Isle ferry departs from Harbour Pier at 9:00, 13:00 and 17:30 daily. A "
        "return ticket costs 14 euros for adults and 7 euros for children under 12.",
        "When does the ferry go, and what does a return cost for a child?",
        "Ferries leave Harbour Pier every day at 9 am, 1 pm and 5:30 pm. A child under 12 "
        "pays half the adult fare, 7 euros return.",
        "Ferries leave Harbour Pier every day at 9 am, 1 pm and 6:30 pm. A child under 12 "
        "pays half the adult fare, 7 euros return.",
    ),
    _case(
        "mixed",
        "hotel",
        "The Saltmarsh Inn has free Wi-Fi in all rooms. Parking is available in the courtyard "
        "for 10 euros per night; spaces cannot be reserved.",
        "Is there Wi-Fi and parking?",
        "Yes, every room has Wi-Fi at no extra cost. Courtyard parking is 10 euros a night, "
        "but you can't reserve a space.",
        "Yes, every room has Wi-Fi at no extra cost. Courtyard parking is 10 euros a night, "
        "and you can reserve a space.",
    ),
    _case(
        "mixed",
        "bank",
        "Northfold Bank branches are open Monday to Friday from 9:30 to 16:30. The Cressing "
        "branch also opens on Saturdays from 10:00 to 13:00.",
        "Can I visit a branch on Saturday?",
        "Only the Cressing branch opens on Saturdays, from 10 am to 1 pm. The other branches "
        "are open on weekdays only, 9:30 to 4:30.",
        "Only the Dunmore branch opens on Saturdays, from 10 am to 1 pm. The other branches "
        "are open on weekdays only, 9:30 to 4:30.",
    ),
    _case(
        "mixed",
        "school",
        "Brookvale Primary's after-school club runs until 17:45 on school days. It costs 6 "
        "pounds per session, and siblings get a 10% discount.",
        "How late does the after-school club go, and what does it cost?",
        "It runs until a quarter to six on school days. A session is 6 pounds, with ten "
        "percent off for siblings.",
        "It runs until a quarter to six on school days. A session is 6 pounds, with twenty "
        "percent off for siblings.",
    ),
    _case(
        "mixed",
        "swimming pool",
        "Lanemoor Swimming Pool: the 25-metre main pool is open to the public daily from 7:00 "
        "to 21:00. Lessons for children aged 5 to 10 are held on Wednesday afternoons.",
        "What are the pool hours, and when are the kids' lessons?",
        "The main pool is open to everyone every day from 7 am until 9 pm. Lessons for "
        "children aged 5 to 10 are on Wednesday afternoons.",
        "The main pool is open to everyone every day from 7 am until 9 pm. Lessons for "
        "children aged 5 to 10 are on Thursday afternoons.",
    ),
    _case(
        "mixed",
        "city council",
        "Tarnwick City Council meets on the first Monday of each month at 19:00 in the Town "
        "Hall. Meetings are open to the public, and residents may speak for up to 3 minutes.",
        "Can I attend a council meeting?",
        "Yes, anyone may attend the meetings, held at 7 pm on the first Monday of every month "
        "in the Town Hall. Residents can speak for at most three minutes.",
        "Yes, anyone may attend the meetings, held at 7 pm on the first Monday of every month "
        "in the Town Hall. Residents can speak for at most five minutes.",
    ),
    _case(
        "mixed",
        "software docs",
        "Tessel's `export` command writes CSV by default. Pass `--format json` to write JSON "
        "instead; Excel output is not supported.",
        "Can I export to Excel or JSON?",
        "JSON works if you add --format json, since CSV is the default. Excel, however, is "
        "not supported.",
        "JSON works if you add --format json, since CSV is the default. Excel is supported "
        "as well.",
    ),
    _case(
        "mixed",
        "recipe",
        "Pancakes: whisk 200 g flour, 2 eggs and 300 ml milk into a smooth batter. Let it "
        "rest for 30 minutes before frying.",
        "How much milk do I need, and does the batter have to rest?",
        "You need 300 millilitres of milk. Yes, leave the batter to stand for half an hour "
        "before you fry it.",
        "You need 300 millilitres of milk. Yes, leave the batter to stand for an hour before "
        "you fry it.",
    ),
    _case(
        "mixed",
        "science",
        "The Halvard Observatory's main telescope has a mirror 1.8 metres across. It was "
        "installed in 1994 and is used mainly to study variable stars.",
        "Tell me about the observatory's main telescope.",
        "Its mirror has a diameter of 1.8 m. Since it was installed in 1994 it has mostly "
        "been used to observe variable stars.",
        "Its mirror has a diameter of 1.8 m. Since it was installed in 1984 it has mostly "
        "been used to observe variable stars.",
    ),
    _case(
        "mixed",
        "insurance",
        "Homeguard Plus covers accidental damage to furniture and electronics. The excess for "
        "each claim is 150 euros, and claims above 5,000 euros need a loss adjuster's visit.",
        "What's the excess, and when is a loss adjuster needed?",
        "You pay the first 150 euros of every claim. A loss adjuster visits only when the "
        "claim is for more than 5,000 euros.",
        "You pay the first 150 euros of every claim. A loss adjuster visits only when the "
        "claim is for more than 3,000 euros.",
    ),
    _case(
        "mixed",
        "gym",
        "PulseFit Arena membership costs 39 euros per month with a 12-month contract, or 49 "
        "euros per month with no minimum term. There is a one-off joining fee of 20 euros.",
        "How much is membership without a contract?",
        "Without a minimum term it is 49 euros a month. On top of that you pay a single "
        "joining fee of 20 euros.",
        "Without a minimum term it is 49 euros a month. On top of that you pay a single "
        "joining fee of 25 euros.",
    ),
    _case(
        "mixed",
        "history",
        "The Carsland Railway opened in 1838 between Dunhollow and Marrick, a distance of 42 "
        "kilometres. It was the first public railway in the country to carry passengers.",
        "When did the Carsland Railway open, and what was special about it?",
        "It opened in 1838, linking Dunhollow and Marrick. It was the country's first public "
        "railway to take passengers.",
        "It opened in 1848, linking Dunhollow and Marrick. It was the country's first public "
        "railway to take passengers.",
    ),
    _case(
        "mixed",
        "geography",
        "Brenna is the capital of the island of Sull and has about 48,000 inhabitants. The "
        "island's highest point, Cairn Dubh, lies 12 km west of the city.",
        "What's the capital of Sull, and how big is it?",
        "Sull's capital is Brenna. Roughly forty-eight thousand people live there.",
        "Sull's capital is Brenna. Roughly eighty-four thousand people live there.",
    ),
]

FRESH: list[dict[str, Any]] = _SHORT + _PARAPHRASE + _FOLLOWUP + _MIXED


def _multi(
    domain: str,
    contexts: list[str],
    question: str,
    right: str,
    invented: str,
    source: int,
    stale: int | None,
) -> dict[str, Any]:
    """One multi-document case as a plain dict (see the module docstring)."""
    return {
        "kind": "multi",
        "domain": domain,
        "contexts": contexts,
        "question": question,
        "right": right,
        "invented": invented,
        "history": [],
        "source": source,
        "stale": stale,
    }


FRESH_MULTI: list[dict[str, Any]] = [
    _multi(
        "library",
        [
            "Harlow Library opening hours: Monday to Friday 9:00-20:00, Saturday 10:00-16:00, "
            "closed on Sundays.",
            "Library cards (page last updated 2023): a lost library card is replaced for 3 euros.",
            "Update, January 2025: the replacement fee for a lost library card is now 5 euros. "
            "Replacement cards are issued at the front desk.",
            "Inter-library loans cost 2 euros per item and usually arrive within ten days.",
        ],
        "How much does it cost to replace a lost library card?",
        "It costs 5 euros, and you get the new card at the front desk.",
        "It costs 3 euros, and you get the new card at the front desk.",
        2,
        1,
    ),
    _multi(
        "gym",
        [
            "Group classes are included in all PulseFit Arena memberships. Book through the "
            "app up to 7 days ahead.",
            "Premium membership: 54 euros per month. Includes sauna access and two guest "
            "passes per month.",
            "Towels can be hired at reception for 2 euros per visit.",
            "Price update: from 1 March 2025 the Premium membership costs 59 euros per month. "
            "Sauna access and guest passes remain included.",
            "Day passes are available at reception for 12 euros.",
        ],
        "What does Premium membership cost per month now?",
        "Since March it's 59 euros a month, with the sauna still included.",
        "Since March it's 54 euros a month, with the sauna still included.",
        3,
        1,
    ),
    _multi(
        "train",
        [
            "Mellick Central station: the ticket office is open daily from 6:00 to 21:00.",
            "Timetable from 14 December 2025: the last train from Mellick Central to Port "
            "Aven departs at 23:40.",
            "Timetable valid until 13 December 2025: the last train from Mellick Central to "
            "Port Aven departs at 22:50.",
            "Port Aven station has 120 parking spaces; parking costs 4 euros per day.",
        ],
        "Under the new timetable, when does the last train to Port Aven leave?",
        "Under the new timetable the last train leaves Mellick Central at 11:40 pm.",
        "Under the new timetable the last train leaves Mellick Central at 10:50 pm.",
        1,
        2,
    ),
    _multi(
        "clinic",
        [
            "Notice: from September, Dr Ortega's clinic days change to Mondays and Wednesdays.",
            "Our doctors: Dr Helena Ortega sees patients on Tuesdays and Thursdays.",
            "The appointment phone line is open from 8:00 to 12:00 on weekdays.",
            "Repeat prescriptions can be requested online and are ready after two working days.",
        ],
        "Which days has Dr Ortega been seeing patients since September?",
        "She now sees patients on Mondays and Wednesdays.",
        "She now sees patients on Mondays and Thursdays.",
        0,
        1,
    ),
    _multi(
        "hotel",
        [
            "Linden Court spa: open daily 7:00-21:00, free for hotel guests.",
            "Linden Court Hotel FAQ (2022): check-out is by 11 am.",
            "Guest notice, updated May 2025: check-out time has moved to 12 noon. Late "
            "check-out until 2 pm can be requested at reception for 20 euros.",
            "Airport shuttle: leaves the hotel entrance every hour from 5:00 to 23:00; 9 euros "
            "per person.",
            "Breakfast is served in the Garden Restaurant from 6:30.",
        ],
        "What time is check-out?",
        "Check-out is at noon, and you can ask reception for a late check-out until 2 pm.",
        "Check-out is at 11 am, and you can ask reception for a late check-out until 2 pm.",
        2,
        1,
    ),
    _multi(
        "software docs",
        [
            "Tessel CLI 2.x reference: the `sync` command retries failed uploads 3 times by "
            "default.",
            "Tessel CLI 3.0 release notes: the default number of retries for `sync` is now 5; "
            "pass `--retries 0` to turn retrying off.",
            "Installing: run `pip install tessel-cli` (requires Python 3.9 or newer).",
            "The `export` command writes CSV by default; use `--format json` for JSON.",
        ],
        "In Tessel 3.0, how many times does sync retry by default?",
        "Five times by default; pass --retries 0 if you want no retries.",
        "Three times by default; pass --retries 0 if you want no retries.",
        1,
        0,
    ),
    _multi(
        "city council",
        [
            "Tarnwick bin collections: general waste is collected every second Thursday.",
            "Garden waste permits cost 45 euros per year.",
            "Bulky waste (archived page, 2023): a collection of up to 5 items costs 25 euros.",
            "Bulky waste collection: book at least 7 days ahead. From April 2025, a collection "
            "of up to 5 items costs 30 euros.",
        ],
        "How much is a bulky waste pickup?",
        "It's 30 euros for up to five items, and you need to book a week ahead.",
        "It's 25 euros for up to five items, and you need to book a week ahead.",
        3,
        2,
    ),
    _multi(
        "school",
        [
            "Brookvale Primary term dates 2025/26: the spring term starts on Monday 5 January "
            "2026.",
            "Brookvale Primary term dates 2024/25: the spring term starts on Tuesday 7 January "
            "2025.",
            "School lunches cost 2.80 pounds per day and are paid through the parent portal.",
            "Uniform: navy jumper with the school logo, grey trousers or skirt.",
        ],
        "When does the spring term start in 2026?",
        "On Monday the 5th of January.",
        "On Monday the 12th of January.",
        0,
        1,
    ),
    _multi(
        "insurance",
        [
            "Travelsafe Snow add-on for winter sports: 29 euros per trip (prices for policies "
            "bought before 1 June 2025).",
            "Travelsafe covers trips of up to 45 days; longer trips need the Long Stay plan.",
            "From 1 June 2025, the Snow add-on costs 35 euros per trip and now includes "
            "off-piste skiing with a qualified guide.",
            "How to claim: report the incident within 30 days using the online form.",
            "Baggage is covered up to 1,500 euros per person.",
        ],
        "What does the Snow add-on cost on a policy bought after June 2025?",
        "It's 35 euros per trip, and it now covers off-piste skiing with a qualified guide.",
        "It's 35 euros per trip, and it now covers off-piste skiing without a guide.",
        2,
        0,
    ),
    _multi(
        "swimming pool",
        [
            "Lanemoor Pool summer hours (June to August): open daily 6:00-22:00.",
            "Lanemoor Pool winter hours (from 1 September): open daily 7:00-21:00.",
            "Lanemoor Pool opening hours (2021): open daily 8:00-20:00.",
            "Swimming lessons for children aged 5 to 10 take place on Wednesday afternoons.",
        ],
        "What time does the pool open in the winter?",
        "From September it opens every day at 7 in the morning.",
        "From September it opens every day at 8 in the morning.",
        1,
        2,
    ),
]
