"""Prompt text for the synthetic arena: topic templates, slot vocabularies, writing style.

A prompt is one *core* request drawn from its topic's templates (slots filled from real
vocabulary), decorated according to the writer's style (:data:`WRITING_TRAITS`):

``length``
    Long-winded writers add context sentences ("I'm working on a Discord bot and I'm
    stuck.") and ask for detail; terse ones ask for short answers ("Keep it short.").
``formality``
    Formal writers greet, say "please"/"could you" and thank; casual ones type in lower
    case, drop the final full stop, write "u", "pls", "thx".
``markdown``
    Structure-minded writers ask for bullet points or tables and paste code in fenced
    blocks; the others occasionally ask for plain text.

The answer-style preferences of a simulated user shape their writing style, so the text
of their queries carries a (noisy) signal about which models they prefer.

Most of this module is the constant text bank; the code is :func:`generate_prompts` at
the end. All randomness comes from the :class:`numpy.random.Generator` handed in.
"""

from __future__ import annotations

import string
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TypedDict

import numpy as np
import numpy.typing as npt

__all__ = [
    "BANK",
    "TopicBank",
    "TOPICS",
    "TOPIC_TITLES",
    "WRITING_TRAITS",
    "check_writing",
    "generate_prompts",
]

# ---------------------------------------------------------------------------------------
# The bank. Templates: one per line; "{slot}" draws from the topic's slots (then the
# common ones); "{slot2}" draws a different word from the same slot. Core templates that
# start with an imperative verb and end with "." can take "Please ..." / "Could you ...?".
# ---------------------------------------------------------------------------------------

IMPERATIVE_VERBS = frozenset(
    "Write Explain Give Create Plan Solve Find Compute Prove Describe Suggest Draft Rewrite "
    "Summarize Implement Convert Refactor Review Fix Compose Continue Outline Turn Tell "
    "Calculate Balance Check Sketch Help List Make Recommend Translate Design".split()
)


class TopicBank(TypedDict):
    """The text of one topic: templates and context sentences (one a line), slots."""

    title: str
    templates: str
    context: str
    slots: dict[str, str]


COMMON_SLOTS: dict[str, str] = {
    "n": "50|100|150|200|300|500|1000",
    "audience": "a five-year-old|a high school student|my grandmother|a complete beginner|"
    "an expert|a busy executive|my coworkers",
}

_CODING: TopicBank = {
    "title": "Coding & software",
    "templates": """
        Write a {lang} function that {task}.
        How do I write a {lang} script that {task}?
        Can you show me how to implement a function in {lang} that {task}?
        Explain {concept} in {lang} with an example.
        What is the difference between {concept} and {concept2}?
        I'm getting this error in {lang}: {error}. How do I fix it?
        Why do I get "{error}" when I run my code?
        Fix this error: {error}
        How do I set up {tool} for {app}?
        Write a SQL query to find {sqlthing}.
        Give me a step-by-step plan to build {app} with {tool}.
        What are best practices for structuring a {tool} project?
        Refactor this {lang} code to make it more readable and efficient.
        Write unit tests for a {lang} function that {task}.
        Convert this {lang} code to {lang2}.
        How can I speed up a {lang} program that {task}?
        Explain {concept} like I'm a junior developer.
        What is the time complexity of an algorithm that {task}?
        How do I deploy {app} using {tool}?
        Write a regular expression that matches {regex}.
        How do I undo the last commit in git without losing my changes?
        Implement {algorithm} in {lang}.
        Is {tool} or {tool2} better for {app}?
        Write a bash one-liner that {shelltask}.
        Write a {lang} class for {app} with proper error handling.
        Review my {lang} code and point out any bugs.
        How do I read a large file line by line in {lang} without running out of memory?
        Create a Dockerfile for {app} written in {lang}.
        Why is my {tool} app so slow, and how can I profile it?
        What's the idiomatic way to handle errors in {lang}?
        Help me design the database schema for {app}.
        Should I learn {lang} or {lang2} first?
        Write a {lang} program that {task} and prints the result.
    """,
    "context": """
        I'm working on {app} and I'm stuck.
        It has to run on {platform}.
        I'm fairly new to {lang}, so please explain each step.
        Performance matters because the input can have millions of rows.
        I already searched Stack Overflow but nothing worked.
        We use {tool} at work and I can't change the stack.
        Please avoid external libraries if possible.
        This is for a coding interview next week.
    """,
    "slots": {
        "lang": "Python|JavaScript|TypeScript|Java|C++|C#|Go|Rust|Ruby|PHP|Kotlin|Swift|"
        "Scala|R|Bash|Haskell",
        "task": "reverses a linked list|checks whether a string is a palindrome|"
        "merges two sorted arrays|parses a CSV file and sums a column|"
        "removes duplicates from a list while keeping the order|"
        "finds the longest common prefix of a list of strings|validates an email address|"
        "converts a Roman numeral to an integer|counts word frequencies in a text file|"
        "flattens a nested list|computes Fibonacci numbers with memoization|"
        "implements binary search|reads a JSON config file|"
        "retries an HTTP request with exponential backoff|debounces a function|"
        "finds all prime numbers below n|rotates a matrix by 90 degrees|"
        "groups a list of records by a key|serializes a binary tree|"
        "computes the Levenshtein distance between two strings|"
        "sends an email with an attachment|resizes all images in a folder|"
        "paginates results from a REST API|detects a cycle in a directed graph|"
        "implements an LRU cache|downloads files in parallel|"
        "converts timestamps between time zones|scrapes product prices from a website",
        "concept": "closures|recursion|async/await|generators|decorators|pointers|"
        "the borrow checker|dependency injection|memoization|big-O notation|the event loop|"
        "garbage collection|virtual functions|lambda expressions|type inference|"
        "race conditions|mutexes|hash maps|REST APIs|GraphQL|database indexes|"
        "Docker volumes|git rebase|mocking in unit tests|list comprehensions|promises|"
        "interfaces|generics|threads|coroutines",
        "error": "TypeError: 'NoneType' object is not subscriptable|"
        "IndexError: list index out of range|Segmentation fault (core dumped)|"
        "NullPointerException|TypeError: undefined is not a function|"
        "ModuleNotFoundError: No module named 'numpy'|KeyError: 'id'|"
        "blocked by CORS policy: No 'Access-Control-Allow-Origin' header|"
        "error[E0382]: borrow of moved value|fatal: refusing to merge unrelated histories|"
        "ValueError: could not convert string to float|"
        "java.lang.OutOfMemoryError: Java heap space|"
        "SyntaxError: unexpected EOF while parsing|connection refused on port 5432|"
        "Permission denied (publickey)|RecursionError: maximum recursion depth exceeded|"
        "npm ERR! code ERESOLVE",
        "tool": "React|Django|Flask|FastAPI|pandas|NumPy|Spring Boot|Express|Docker|"
        "Kubernetes|PostgreSQL|MongoDB|Redis|TensorFlow|PyTorch|Next.js|Vue|Angular|"
        "Terraform|GitHub Actions|Selenium|Unity|Node.js|Tailwind CSS|SQLite|Kafka",
        "app": "a todo list app|a chat application|a URL shortener|a weather dashboard|"
        "an online store|a blog engine|a REST API for a library|a Discord bot|"
        "a personal finance tracker|a snake game|a web scraper|a recommendation engine|"
        "a markdown editor|a file sync tool|an inventory management system|"
        "a booking system for a hair salon|a real-time multiplayer quiz",
        "sqlthing": "the top 5 customers by total order value|"
        "the average salary per department|"
        "all users who signed up last month but never logged in|"
        "duplicate rows in a table|the second highest salary|monthly revenue growth|"
        "employees who earn more than their managers|the running total of sales per day|"
        "products that were never ordered",
        "regex": "valid IPv4 addresses|dates in the format YYYY-MM-DD|US phone numbers|"
        "hex color codes|URLs that start with https|words that start with a capital letter|"
        "passwords with at least one digit and one symbol|email addresses",
        "algorithm": "quicksort|merge sort|Dijkstra's algorithm|breadth-first search|a trie|"
        "a min-heap|union-find|A* search|KMP string matching|topological sort|"
        "a bloom filter|a red-black tree|k-means clustering|a rate limiter",
        "shelltask": "finds all files larger than 100MB|counts the lines in every .py file|"
        "renames all .jpeg files to .jpg|kills the process listening on port 8080|"
        "shows the ten most used commands in my history|"
        "deletes all node_modules folders recursively|replaces a word in every file",
        "platform": "Windows 11|Ubuntu 22.04|macOS|a Raspberry Pi|AWS Lambda|"
        "an old laptop with 4GB of RAM|a shared hosting server|an Android phone",
    },
}

_MATH: TopicBank = {
    "title": "Math",
    "templates": """
        Solve for x: {eq}
        How do I solve {eq}? Show every step.
        Find the derivative of f(x) = {func}.
        Compute the integral of {func} dx.
        What is the limit of {func} as x approaches 0?
        Explain {concept} with a simple example.
        Can you explain {concept} intuitively?
        Prove that {theorem}.
        Give me a proof that {theorem} that a high school student can follow.
        {wp}
        Solve this word problem: {wp}
        Find the eigenvalues and eigenvectors of the matrix {matrix}.
        Compute the determinant and the inverse of {matrix}.
        Is {num} a prime number? If not, what is its prime factorization?
        What is the greatest common divisor of {num} and {num2}?
        Does the series of {series} converge? If so, to what?
        What is the sum of {series} from n = 1 to infinity?
        What is the difference between {concept} and {concept2}?
        Find the minimum and maximum of f(x) = {func} on the interval [-2, 2].
        Sketch the graph of y = {func} and describe its asymptotes.
        How is {concept} used in machine learning?
        Check my solution: I got x = {num} for {eq}. Is that right?
        Write the Taylor expansion of {func} around x = 0 up to third order.
        What is {num} choose 3, and how do you compute it?
        Explain why {theorem}.
        Convert {num} to binary and hexadecimal.
        What is the probability of getting at least one six in {num} rolls of a fair die?
        Explain {concept} to {audience}.
    """,
    "context": """
        This is for my {course} homework.
        I have an exam tomorrow and I don't understand my textbook's explanation.
        Please don't just give the answer, I want to understand the method.
        My teacher got a different answer and I'm confused.
        Use LaTeX for the formulas.
        I'm studying {course} on my own.
    """,
    "slots": {
        "eq": "3x + 7 = 22|2x^2 - 8x + 6 = 0|x^2 + 5x + 6 = 0|log2(x) + log2(x - 2) = 3|"
        "e^(2x) = 5|sqrt(x + 4) = x - 2||2x - 3| = 7|5x - 2 = 3x + 10|"
        "x^3 - 6x^2 + 11x - 6 = 0|sin(x) = 1/2 on [0, 2pi]|4^x = 32|x/3 + x/4 = 14",
        "func": "x^3 - 3x^2 + 2|sin(x) * e^x|ln(x^2 + 1)|x / (1 + x^2)|e^(-x^2)|"
        "sqrt(1 - x^2)|x^2 * ln(x)|1 / (x^2 - 4)|arctan(2x)|cos^2(x)|tan(x) / x|"
        "(x^2 - 1) / (x - 1)",
        "concept": "eigenvalues|the central limit theorem|Bayes' theorem|p-values|"
        "the chain rule|integration by parts|modular arithmetic|the pigeonhole principle|"
        "Taylor series|the determinant of a matrix|standard deviation|complex numbers|"
        "mathematical induction|the Fourier transform|conditional probability|"
        "group theory|L'Hopital's rule|linear regression|vector spaces|"
        "prime factorization|the law of large numbers|derivatives|limits|"
        "matrix multiplication|the Pythagorean theorem|logarithms",
        "theorem": "there are infinitely many primes|sqrt(2) is irrational|"
        "the sum of the first n odd numbers is n^2|"
        "every tree with n nodes has n - 1 edges|"
        "the angles of a triangle sum to 180 degrees|"
        "n^3 - n is divisible by 6 for every integer n|the harmonic series diverges|"
        "a bounded monotone sequence converges|0.999... equals 1",
        "wp": "A train travels 240 km in 3 hours. How long will it take to travel 400 km at "
        "the same speed?|If I invest $5,000 at 4% interest compounded annually, how much "
        "will I have after 10 years?|A rectangle has a perimeter of 36 cm and its length is "
        "twice its width. What is its area?|Two dice are rolled. What is the probability "
        "that the sum is 8?|A bag has 5 red and 7 blue marbles. If I draw 3 without "
        "replacement, what is the probability that all are blue?|A tank fills in 6 hours "
        "with pipe A and in 4 hours with pipe B. How long does it take with both pipes "
        "open?|A jacket is reduced by 20% and then by another 15%. What is the total "
        "discount?|How many ways can 8 people sit around a round table?|A car loses 12% of "
        "its value every year. When will it be worth half its original price?|In a class "
        "of 30 students, 18 play football, 12 play chess and 5 play both. How many play "
        "neither?|A 10 m ladder leans against a wall with its foot 6 m from the wall. How "
        "high does it reach?|What is the expected number of coin flips needed to get two "
        "heads in a row?",
        "matrix": "[[2, 1], [1, 3]]|[[4, -2], [1, 1]]|[[1, 2, 3], [0, 1, 4], [5, 6, 0]]|"
        "[[0, 1], [-1, 0]]|[[3, 0], [0, 5]]",
        "num": "17|144|360|1001|2024|97|256|945|12|65|91|7",
        "series": "1/n^2|1/2^n|(-1)^n / n|n / 3^n|1/(n(n+1))|1/sqrt(n)",
        "course": "calculus|linear algebra|statistics|discrete math|real analysis|"
        "probability|algebra II|number theory|econometrics",
    },
}

_CREATIVE: TopicBank = {
    "title": "Creative writing",
    "templates": """
        Write a {form} about {subject}.
        Write a {tone} {form} about {subject}.
        Can you write a {form} about {subject} in the style of {author}?
        Write a {n}-word story about {character} in {setting}.
        Give me ideas for a {genre} novel set in {setting}.
        Create a character profile for {character} in a {genre} story.
        Write the opening paragraph of a {genre} novel about {character}.
        Write a dialogue between {character} and {character2}.
        Continue this story: The door to {setting} creaked open and {character} stepped inside.
        Write a {tone} poem about {subject}.
        Compose song lyrics about {subject} with a catchy chorus.
        Write a haiku about {subject}.
        Give me a plot twist for a {genre} story about {character}.
        Suggest ten names for a town in my {genre} world.
        Write a bedtime story for a five-year-old about {subject}.
        Rewrite the story of Cinderella as a {genre} tale.
        Describe {setting} in vivid sensory detail.
        Write a limerick about {character}.
        Write a {tone} letter from {character} to their younger self.
        Outline a three-act structure for a {genre} screenplay about {subject}.
        Write a scene where {character} discovers a terrible secret.
        Write a rap battle between {author} and {author2}.
        Give me five writing prompts for a {genre} short story.
        Write an acrostic poem using the word {word}.
        Write a {tone} {form} inspired by {setting}.
        Turn this idea into a short story: {subject}.
        Write a story that ends with the line "{line}"
        Help me improve the first line of my {genre} novel: "{line}"
        What rhymes with {word} for a {tone} song?
    """,
    "context": """
        It's for a creative writing class.
        Please make it rhyme.
        It should be suitable for children.
        Make the ending unexpected.
        I'm going to read it at my {event}.
        Avoid cliches like "once upon a time".
        The main character should be called {name}.
    """,
    "slots": {
        "form": "short story|poem|haiku|sonnet|limerick|song|rap verse|fairy tale|"
        "flash fiction piece|screenplay scene|monologue|free verse poem|ballad|fable",
        "subject": "a lighthouse keeper who finds a message in a bottle|"
        "a robot learning to paint|two rival bakers in a small town|"
        "a dragon who is afraid of fire|the last tree on Earth|"
        "a detective cat in Victorian London|a time traveler stuck in 1920s Paris|"
        "autumn leaves|the ocean at night|a grandmother's kitchen|first love|"
        "a city after the rain|an astronaut alone on Mars|a haunted library|"
        "a friendship between a ghost and a child|the moon falling in love with the sun|"
        "a knight who refuses to fight|a village where nobody can lie|"
        "losing a childhood home|a street musician in the subway|a snowy mountain cabin",
        "tone": "whimsical|melancholic|dark and suspenseful|funny|hopeful|romantic|epic|"
        "nostalgic|satirical|eerie|bittersweet|lighthearted",
        "author": "Edgar Allan Poe|Jane Austen|Ernest Hemingway|Dr. Seuss|Shakespeare|"
        "Emily Dickinson|Haruki Murakami|Terry Pratchett|Tolkien|Agatha Christie|"
        "H. P. Lovecraft|Mary Oliver|Neil Gaiman",
        "character": "a retired pirate|a shy librarian|an ambitious young witch|"
        "a grumpy old wizard|a talking fox|a rebellious princess|"
        "an AI that wants to be human|a small-town sheriff|a street-smart orphan|"
        "a clumsy superhero|a lonely lighthouse keeper|a ghost who hates haunting",
        "genre": "fantasy|science fiction|mystery|horror|romance|thriller|cyberpunk|"
        "post-apocalyptic|historical fiction|magical realism|steampunk",
        "setting": "a floating city|an abandoned space station|a medieval kingdom at war|"
        "a rainy noir city|an underwater colony|a small fishing village|a desert caravan|"
        "a boarding school for magicians|a generation ship|Tokyo in the year 2150|"
        "an enchanted forest",
        "word": "OCEAN|FRIEND|SUMMER|COFFEE|DREAMS|WINTER|HOPE|MUSIC|HOME",
        "line": "And that was the last time anyone saw the lighthouse lit.|"
        "She finally understood why the birds had left.|"
        "Nobody ever asked the dragon again.|The clock struck thirteen.|"
        "He smiled, because the letter had finally arrived.",
        "event": "sister's wedding|friend's birthday party|book club|open mic night|"
        "grandfather's funeral|retirement party",
        "name": "Mira|Elias|Juno|Theo|Aiko|Rosa|Finn|Leila",
    },
}

_BUSINESS: TopicBank = {
    "title": "Business & email",
    "templates": """
        Write a {doc} to {recipient} {purpose}.
        Draft a professional email to {recipient} {purpose}.
        Can you help me write a cover letter for a {role} position?
        Write a {doc} for {company}.
        Rewrite this email to sound more professional: "hey, {casualmsg}"
        Create a business plan outline for {company}.
        What are good marketing strategies for {company}?
        Explain {bizconcept} in simple terms.
        How do I calculate {bizconcept}?
        Give me a SWOT analysis for {company}.
        Write a job description for a {role} at {company}.
        What questions should I expect in an interview for a {role} role?
        How should I answer "What is your biggest weakness?" in a {role} interview?
        Write a LinkedIn summary for a {role} with five years of experience.
        Suggest a catchy slogan for {company}.
        How do I negotiate a higher salary as a {role}?
        Write a polite reply to a customer who is {complaint}.
        Create an agenda for a one-hour meeting about {meeting}.
        How can we improve {bizconcept} at {company}?
        Give me ten name ideas for {company}.
        Write a performance review for a {role} who {perf}.
        What should I include in a pitch deck for {company}?
        Write a short bio of a {role} for our company website.
        How do I tell {recipient} that {badnews}?
        Write a product description for {product}.
        Summarize the key points I should mention in an email to {recipient} {purpose}.
        How do I price {product} for {company}?
        Draft a LinkedIn post announcing that {announcement}.
    """,
    "context": """
        I work as a {role} at {company}.
        Keep the tone friendly but professional.
        This is really important for my career.
        My manager is very detail-oriented.
        We are a team of {teamsize} people.
        The deadline is on Friday.
        English is not my first language.
    """,
    "slots": {
        "doc": "follow-up email|cold email|thank-you note|complaint letter|"
        "resignation letter|short memo|formal letter|quick message",
        "recipient": "my manager|a potential client|the HR department|a recruiter|my team|"
        "the board of directors|a supplier|an unhappy customer|my landlord|"
        "a former colleague|our investors",
        "purpose": "asking for a raise|requesting a deadline extension|"
        "declining a job offer|following up after an interview|"
        "apologizing for a delayed shipment|introducing our new product|"
        "scheduling a meeting next week|announcing a reorganization|"
        "asking for feedback on a proposal|negotiating a lower price|"
        "requesting a reference|about an unpaid invoice|welcoming a new employee|"
        "explaining a service outage",
        "role": "software engineer|marketing manager|data analyst|project manager|"
        "sales representative|nurse|graphic designer|accountant|teacher|product manager|"
        "customer support agent|financial analyst|HR specialist",
        "company": "a small bakery|a SaaS startup|a dental clinic|a local gym|"
        "an online store selling handmade jewelry|a consulting firm|a food truck|"
        "a real estate agency|a mobile game studio|a coffee shop|"
        "a nonprofit animal shelter|a logistics company|a law firm",
        "bizconcept": "EBITDA|product-market fit|a SWOT analysis|OKRs|"
        "customer lifetime value|churn rate|a balance sheet|supply chain management|"
        "net promoter score|agile project management|a go-to-market strategy|"
        "working capital|a value proposition|break-even analysis|gross margin|"
        "customer acquisition cost",
        "casualmsg": "cant make it tomorrow, can we move the call?|"
        "the report is late again sorry|need the numbers asap|"
        "thanks for the help last week, owe you one|we need to talk about the budget|"
        "i think the client is unhappy",
        "complaint": "upset about a late delivery|asking for a refund|"
        "complaining about our prices|unhappy with the quality of our work|"
        "asking why their account was suspended",
        "meeting": "the quarterly budget|the product launch|hiring plans|customer churn|"
        "the office move|the new sales targets",
        "perf": "exceeded all targets this year|struggles with deadlines|"
        "is great with customers but disorganized|just completed their first year|"
        "is ready for a promotion",
        "badnews": "the project will be two weeks late|we are going over budget|"
        "I am leaving the company|we lost our biggest client|their request was denied",
        "product": "noise-cancelling headphones|an ergonomic office chair|"
        "an organic green tea|a project management app|a reusable water bottle|"
        "handmade leather wallets|a meal kit subscription",
        "announcement": "I got promoted|our startup raised a seed round|"
        "I am looking for a new job|we are hiring|our team won an industry award",
        "teamsize": "3|5|12|40|200",
    },
}

_SCIENCE: TopicBank = {
    "title": "Science",
    "templates": """
        Explain {phenomenon} in simple terms.
        How does {phenomenon} work?
        {question}?
        I've always wondered: {question}?
        What are the latest discoveries about {phenomenon}?
        Explain {phenomenon} to {audience}.
        What is the atomic number of {element}, and what is it used for?
        What are the chemical properties of {element}?
        What did {scientist} discover, and why was it important?
        Summarize the main ideas of {field}.
        What are the biggest open problems in {field}?
        Explain {experiment} and what it showed.
        What is the difference between {phenomenon} and {phenomenon2}?
        How do scientists measure {measure}?
        What is the evidence for {phenomenon}?
        Is it true that {myth}?
        Describe the structure of {structure}.
        What would happen if {hypo}?
        How is {phenomenon} studied in {field}?
        Write a short summary of how {scientist} changed {field}.
        Balance this chemical equation: {equation}
        Calculate the {physcalc}.
        Why is {phenomenon} important for life on Earth?
        What careers are there in {field}?
        Explain the physics behind {question}.
    """,
    "context": """
        I'm studying {field} at university.
        I watched a documentary about this and got curious.
        My kid asked me this and I didn't know what to say.
        Please mention the key experiments if you can.
        Explain it without too much jargon.
        This is for a science fair project.
    """,
    "slots": {
        "phenomenon": "black holes|photosynthesis|quantum entanglement|climate change|"
        "plate tectonics|the greenhouse effect|nuclear fusion|special relativity|"
        "DNA replication|evolution by natural selection|the Doppler effect|"
        "superconductivity|dark matter|ocean tides|the water cycle|CRISPR gene editing|"
        "the Big Bang|entropy|radioactive decay|neutron stars|the Higgs boson|"
        "cellular respiration|chemical bonding|continental drift|gravitational waves",
        "question": "Why is the sky blue|How do airplanes stay in the air|"
        "Why does ice float on water|How far away is the nearest star|"
        "Why do we have seasons|How hot is the core of the Earth|Why is the ocean salty|"
        "How do magnets work|What happens inside a nuclear reactor|Why do stars twinkle|"
        "How do bees make honey|What would happen if the Moon disappeared|"
        "How do solar panels generate electricity|Why do leaves change color in autumn|"
        "How do we know the age of the universe|Could humans live on Mars|"
        "How do earthquakes happen|Why can't anything go faster than light|"
        "Why do cats purr|How do rainbows form",
        "element": "sodium|carbon|oxygen|uranium|helium|iron|lithium|gold|silicon|"
        "hydrogen|neon|calcium|mercury|copper",
        "field": "astrophysics|organic chemistry|quantum mechanics|molecular biology|"
        "geology|ecology|neuroscience|thermodynamics|particle physics|marine biology|"
        "genetics|materials science|climate science",
        "scientist": "Albert Einstein|Marie Curie|Isaac Newton|Charles Darwin|"
        "Richard Feynman|Rosalind Franklin|Niels Bohr|Nikola Tesla|Galileo Galilei|"
        "Stephen Hawking|Gregor Mendel|Dmitri Mendeleev|Lise Meitner",
        "experiment": "the double-slit experiment|the Michelson-Morley experiment|"
        "Schrodinger's cat|the Miller-Urey experiment|Mendel's pea plant experiments|"
        "Rutherford's gold foil experiment|Pavlov's dog experiment|"
        "the Large Hadron Collider|the Cavendish experiment",
        "measure": "the distance to other galaxies|the age of rocks|"
        "the temperature of the Sun|the mass of an electron|"
        "carbon dioxide levels in the atmosphere|the speed of sound|"
        "the expansion of the universe",
        "myth": "we only use 10% of our brains|"
        "lightning never strikes the same place twice|"
        "the Great Wall of China is visible from space|"
        "goldfish have a three-second memory|bats are blind|humans have only five senses",
        "structure": "an atom|a cell membrane|the Milky Way|DNA|the Earth's atmosphere|"
        "a virus|a neuron|the Sun",
        "hypo": "the Earth stopped spinning|gravity were twice as strong|"
        "all the ice on Earth melted|the Sun turned into a black hole|"
        "humans could photosynthesize|there was no Moon",
        "equation": "H2 + O2 -> H2O|C3H8 + O2 -> CO2 + H2O|Fe + O2 -> Fe2O3|"
        "Na + Cl2 -> NaCl|CH4 + O2 -> CO2 + H2O|Al + HCl -> AlCl3 + H2",
        "physcalc": "kinetic energy of a 2 kg ball moving at 5 m/s|"
        "force needed to accelerate a 1200 kg car at 3 m/s^2|"
        "wavelength of a 100 MHz radio wave|"
        "half-life of a sample that decays to 25% in 10 days|"
        "pressure at the bottom of a 10 m deep pool|escape velocity from the Moon",
    },
}

_HEALTH: TopicBank = {
    "title": "Health & fitness",
    "templates": """
        What could be causing {symptom}?
        I've had {symptom} for two weeks. Should I see a doctor?
        What are the early signs of {condition}?
        How is {condition} usually treated?
        What is the recommended dose of {drug} for {person}?
        Is it safe to take {drug} together with {drug2}?
        What are the side effects of {drug}?
        Can {drug} help with {condition}?
        Create a weekly workout plan to help me {goal}.
        Give me a meal plan to help me {goal}.
        Is {diet} healthy for {person}?
        What are the pros and cons of {diet}?
        How can {person} {goal}?
        How much sleep does {person} need?
        What exercises help with {symptom}?
        What foods should I avoid if I have {condition}?
        Explain the difference between {condition} and {condition2}.
        When is {symptom} a reason to go to the emergency room?
        What lifestyle changes reduce the risk of {condition}?
        Is {diet} effective for managing {condition}?
        How many calories should {person} eat per day to {goal}?
        What does a high {labvalue} mean on a blood test?
        What stretches are good for {symptom}?
        How can I support a friend who has {condition}?
        Are there natural remedies for {symptom}?
        Is {drug} addictive?
        Explain {condition} to {audience}.
    """,
    "context": """
        I'm {person} and otherwise healthy.
        I already talked to my doctor but I want a second opinion.
        I don't have health insurance right now.
        It started after I {trigger}.
        I'm vegetarian.
        Please give evidence-based advice.
        I take {drug} every day.
    """,
    "slots": {
        "symptom": "a persistent headache|lower back pain|trouble sleeping|"
        "a dry cough that won't go away|heartburn after meals|dizziness when standing up|"
        "itchy skin|knee pain when running|constant fatigue|a sore throat|"
        "anxiety before exams|tingling in my hands|a swollen ankle|stomach cramps|"
        "shortness of breath on stairs|frequent nosebleeds",
        "condition": "type 2 diabetes|high blood pressure|migraine|asthma|depression|"
        "ADHD|iron deficiency anemia|hypothyroidism|irritable bowel syndrome|eczema|"
        "insomnia|high cholesterol|arthritis|PCOS|celiac disease|sleep apnea",
        "drug": "ibuprofen|paracetamol|metformin|melatonin|omeprazole|amoxicillin|"
        "vitamin D|creatine|caffeine|antihistamines|statins|sertraline|magnesium|aspirin",
        "goal": "lose 10 pounds|build muscle|run a 5K|lower cholesterol|sleep better|"
        "reduce stress|improve posture|eat more protein|quit smoking|"
        "drink less alcohol|gain weight healthily|become more flexible",
        "diet": "keto|intermittent fasting|the Mediterranean diet|a vegan diet|"
        "a low-FODMAP diet|a high-protein diet|the DASH diet|a gluten-free diet|"
        "the carnivore diet",
        "person": "a 35-year-old woman|a 60-year-old man|a teenager|a pregnant woman|"
        "someone who works night shifts|a beginner|a marathon runner|"
        "someone with a desk job|a 70-year-old",
        "labvalue": "LDL cholesterol|TSH level|ferritin|HbA1c|white blood cell count|"
        "CRP|creatinine|vitamin B12",
        "trigger": "changed my diet|started a new job|began running again|"
        "moved to a new city|started a new medication|had COVID last month",
    },
}

_TRAVEL_FOOD: TopicBank = {
    "title": "Travel & cooking",
    "templates": """
        Plan a {days}-day itinerary for {city}.
        Plan a {days}-day trip to {city} for {traveler}.
        What are the best things to do in {city} in {season}?
        Is {city} worth visiting in {season}?
        What local dishes should I try in {city}?
        Give me a recipe for {dish}.
        How do I make {dish} from scratch?
        Can you make a {diet} version of {dish}?
        What can I cook with {ingredient}, {ingredient2} and {ingredient3}?
        Suggest a {diet} dinner using {ingredient}.
        How long should I roast {ingredient} in the oven?
        What wine goes well with {dish}?
        What should I pack for {days} days in {city} in {season}?
        How can I get around {city} cheaply?
        Which neighborhoods are best to stay in {city} for {traveler}?
        Plan a trip to {city} and {city2} for {traveler} with a budget of {budget}.
        Is it better to visit {city} or {city2} for {days} days?
        What are common tourist scams in {city}?
        Give me a weekly meal prep plan with {ingredient} and {ingredient2}.
        Why did my {dish} turn out {fail}?
        What can I use instead of {ingredient} in {dish}?
        What is the best way to get from the airport to the city center in {city}?
        Suggest a romantic dinner I can cook at home with {ingredient}.
        What are some hidden gems in {city} that tourists usually miss?
        How do I store leftover {dish}, and how long does it keep?
        Do I need a visa to visit {city} as a {nationality} citizen?
        What are good day trips from {city}?
        Scale this recipe for {dish} to serve {servings} people.
    """,
    "context": """
        We love {interest}.
        The trip is for {traveler}.
        I don't eat pork.
        I only have an air fryer and a microwave.
        I'm a complete beginner in the kitchen.
        Our budget is {budget}.
        I'll be there in {season}.
    """,
    "slots": {
        "city": "Paris|Tokyo|Rome|New York|Barcelona|Lisbon|Bangkok|Istanbul|Kyoto|"
        "Mexico City|Prague|Marrakech|Reykjavik|Buenos Aires|Seoul|Cape Town|Amsterdam|"
        "Hanoi|Vienna|Edinburgh|Bali|Dubrovnik|Vancouver|Sydney",
        "days": "2|3|4|5|7|10|14",
        "traveler": "a family with two kids|a solo traveler|a couple on their honeymoon|"
        "a group of college friends|a retired couple|a backpacker on a tight budget|"
        "a business traveler|someone who uses a wheelchair",
        "dish": "lasagna|chicken tikka masala|pad thai|banana bread|sourdough bread|"
        "beef stew|vegetable curry|tiramisu|ramen|paella|guacamole|shakshuka|pancakes|"
        "risotto|chocolate chip cookies|French onion soup|tacos al pastor|falafel|"
        "lemon cheesecake|pho",
        "ingredient": "chickpeas|leftover rice|chicken thighs|eggplant|tofu|spinach|"
        "ground beef|salmon|sweet potatoes|mushrooms|lentils|zucchini|eggs|canned tuna|"
        "quinoa|feta cheese",
        "diet": "vegan|gluten-free|dairy-free|low-carb|nut-free|vegetarian|halal|kid-friendly",
        "season": "spring|summer|autumn|winter|the rainy season|December|cherry blossom season",
        "budget": "$500|$1,000|$2,500|$5,000|about $300 per person",
        "fail": "too dry|too salty|soggy|flat|burnt on the bottom|bland|too dense",
        "nationality": "US|Indian|British|Brazilian|German|Nigerian|Chinese|Canadian",
        "servings": "2|4|8|12|20",
        "interest": "museums and history|hiking and nature|street food|nightlife|"
        "photography|shopping|beaches|architecture|local markets",
    },
}

_CHAT: TopicBank = {
    "title": "Casual chat",
    "templates": """
        hi
        Hello! How are you today?
        Tell me a joke about {thing}.
        Tell me a fun fact about {thing}.
        What do you think about {chat}?
        What's your favorite {fav}?
        Let's play {game}.
        Can we play {game}?
        I'm feeling {mood} today. Can you cheer me up?
        I'm {mood}, talk to me.
        What should I do {when}?
        Who are you?
        What can you do?
        Are you smarter than other AI models?
        Do you have feelings?
        Give me a random fun fact.
        Tell me something interesting about {thing}.
        Would you rather fight one horse-sized duck or a hundred duck-sized horses?
        If you could be any animal, which would you be and why?
        Let's talk about {chat}.
        Say something funny.
        Give me a cheesy pickup line about {thing}.
        Tell me a riddle.
        What is your honest opinion on {thing}?
        What's a good name for my new {pet}?
        Which is better, {thing} or {thing2}?
        Write me a sweet good morning message for my {relation}.
        I can't sleep. Talk to me about {thing}.
        Tell me a story, anything you like.
        what's up
        Do you dream?
    """,
    "context": """
        I had a long day.
        My friend says {thing} is overrated.
        Just be honest.
        Be funny.
        I'm just curious.
        I'm bored at work.
    """,
    "slots": {
        "thing": "pizza|cats|dogs|Mondays|coffee|the ocean|rainy days|video games|music|"
        "summer|pineapple on pizza|robots|penguins|tacos|books|movies|Taylor Swift|"
        "cheese|social media",
        "chat": "the meaning of life|whether AI can be conscious|what makes people happy|"
        "whether aliens exist|the best movie of all time|free will|"
        "whether money can buy happiness|what you would do with a million dollars|"
        "the future of humanity|why people procrastinate",
        "when": "on a rainy Sunday|with friends this weekend|when I'm bored|"
        "on a first date|at a party|alone at home|on a long flight",
        "mood": "bored|sad|tired|happy|stressed|lonely|excited|anxious",
        "game": "20 questions|would you rather|trivia|rock paper scissors|a riddle game|"
        "two truths and a lie|word association",
        "fav": "movie|book|color|food|song|animal|season|holiday",
        "pet": "puppy|kitten|goldfish|hamster|parrot|turtle",
        "relation": "girlfriend|boyfriend|best friend|mom|wife|husband|group chat",
    },
}

BANK: dict[str, TopicBank] = {
    "coding": _CODING,
    "math": _MATH,
    "creative_writing": _CREATIVE,
    "business": _BUSINESS,
    "science": _SCIENCE,
    "health": _HEALTH,
    "travel_food": _TRAVEL_FOOD,
    "chat": _CHAT,
}

DECORATIONS: dict[str, tuple[str, ...]] = {
    "greet_formal": ("Hello.", "Hi there.", "Good morning!", "Hello!", "Dear assistant,"),
    "greet_casual": ("hey", "hi", "yo", "hey there", "hii"),
    "polite_formal": (
        "Please ",
        "Could you please ",
        "Could you ",
        "Kindly ",
        "I would appreciate it if you could ",
    ),
    "polite_casual": ("pls ", "can u ", "plz ", "quick one: "),
    "format_rich": (
        "Use bullet points.",
        "Format the answer as a markdown table.",
        "Use headings and a numbered list.",
        "Give me a structured answer with sections.",
        "Answer in a table.",
        "Summarize with bullet points at the end.",
    ),
    "long": (
        "Explain in detail.",
        "Be thorough and go step by step.",
        "Give me a comprehensive answer.",
        "Please include examples and explain your reasoning.",
        "The more detail the better.",
    ),
    "short": (
        "Keep it short.",
        "Be concise.",
        "Answer in one sentence.",
        "tl;dr please.",
        "Just the answer, no explanation.",
        "Short answer please.",
    ),
    "thanks_formal": (
        "Thank you!",
        "Thanks in advance.",
        "Many thanks.",
        "Thank you very much for your help.",
    ),
    "thanks_casual": ("thx", "ty", "thanks", "thanks!!"),
    "snippets": (
        "python\ndef average(xs):\n    total = 0\n    for x in xs:\n        total += x\n"
        "    return total / len(xs)",
        "python\nimport pandas as pd\ndf = pd.read_csv('data.csv')\n"
        "print(df.groupby('city')['sales'].sum())",
        "javascript\nfetch(url).then(res => res.json()).then(data => {\n"
        "  console.log(data.items[0].name);\n});",
        "python\nfor i in range(len(items)):\n    if items[i] == target:\n        return i",
        "java\npublic int sum(int[] a) {\n    int s = 0;\n    for (int x : a) s += x;\n"
        "    return s;\n}",
        "sql\nSELECT name, COUNT(*) FROM orders JOIN users ON orders.user_id = users.id\n"
        "GROUP BY name;",
        "rust\nfn main() {\n    let v = vec![1, 2, 3];\n    let w = v;\n"
        '    println!("{:?}", v);\n}',
        "cpp\nint* p = new int[10];\nfor (int i = 0; i <= 10; i++) p[i] = i;",
    ),
}

#: Topic labels, in the order used by the simulator's arrays.
TOPICS: tuple[str, ...] = tuple(BANK)
#: Human-readable topic names.
TOPIC_TITLES: Mapping[str, str] = {t: spec["title"] for t, spec in BANK.items()}
#: Columns of the ``writing`` array of :func:`generate_prompts`.
WRITING_TRAITS: tuple[str, ...] = ("length", "formality", "markdown")

# ---------------------------------------------------------------------------------------
# The generator.
# ---------------------------------------------------------------------------------------

_ObjArray = npt.NDArray[np.object_]
_FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class _Template:
    """A template in positional form: ``text.format(*fillers)``."""

    text: str
    slots: tuple[tuple[str, str], ...]  # (vocabulary key, base slot) of each field
    imperative: bool  # "Write a poem." -> can become "Could you write a poem?"


@dataclass(frozen=True)
class _Topic:
    core: tuple[_Template, ...]
    context: tuple[_Template, ...]
    vocab: Mapping[str, _ObjArray]


def _lines(block: str) -> list[str]:
    return [line.strip() for line in block.strip().splitlines() if line.strip()]


def _with_article(words: _ObjArray, article: str) -> _ObjArray:
    """``"a eerie"`` -> ``"an eerie"``, but ``"a US citizen"`` stays."""
    return np.array(
        [
            f"{article}n {w}" if w[0] in "aeiouAEIOU" and w[1:2].islower() else f"{article} {w}"
            for w in words
        ],
        dtype=object,
    )


def _parse(raw: str, vocab: dict[str, _ObjArray], topic: str) -> _Template:
    """Parse a template; ``"a {slot}"`` becomes one field drawn from articled words."""
    pieces: list[str] = []
    slots: list[tuple[str, str]] = []
    for literal, field, _, _ in string.Formatter().parse(raw):
        if field is None:
            pieces.append(literal.replace("{", "{{").replace("}", "}}"))
            continue
        base = field.rstrip("0123456789")
        if base not in vocab:
            raise KeyError(f"Template {raw!r} of topic {topic!r} uses unknown slot {field!r}.")
        key = base
        for article in ("a", "A"):
            if literal == f"{article} " or literal.endswith(f" {article} "):
                literal, key = literal[:-2], f"{article} {base}"
                if key not in vocab:
                    vocab[key] = _with_article(vocab[base], article)
        pieces.extend([literal.replace("{", "{{").replace("}", "}}"), "{}"])
        slots.append((key, base))
    imperative = raw.endswith(".") and raw.split(" ", 1)[0] in IMPERATIVE_VERBS
    return _Template("".join(pieces), tuple(slots), imperative)


@lru_cache(maxsize=1)
def _compiled() -> tuple[_Topic, ...]:
    out = []
    for topic, spec in BANK.items():
        merged = {**COMMON_SLOTS, **spec["slots"]}
        vocab = {k: np.array(v.split("|"), dtype=object) for k, v in merged.items()}
        core = tuple(_parse(t, vocab, topic) for t in _lines(spec["templates"]))
        context = tuple(_parse(t, vocab, topic) for t in _lines(spec["context"]))
        out.append(_Topic(core, context, vocab))
    return tuple(out)


def _fill(
    templates: Sequence[_Template],
    which: npt.NDArray[np.intp],
    vocab: Mapping[str, _ObjArray],
    rng: np.random.Generator,
) -> _ObjArray:
    """Fill ``templates[which[i]]`` for every ``i``; a repeated slot gets a different word."""
    out = np.empty(len(which), dtype=object)
    order = np.argsort(which, kind="stable")
    bounds = np.concatenate([[0], np.cumsum(np.bincount(which, minlength=len(templates)))])
    for k, tpl in enumerate(templates):
        rows = order[bounds[k] : bounds[k + 1]]
        if len(rows) == 0:
            continue
        columns: list[list[str]] = []
        drawn: dict[str, npt.NDArray[np.int64]] = {}
        for key, base in tpl.slots:
            words = vocab[key]
            if base in drawn and len(words) > 1:
                idx = (drawn[base] + rng.integers(1, len(words), size=len(rows))) % len(words)
            else:
                idx = rng.integers(0, len(words), size=len(rows))
            drawn[base] = idx
            columns.append(words[idx].tolist())
        if columns:
            out[rows] = [tpl.text.format(*args) for args in zip(*columns, strict=True)]
        else:
            out[rows] = tpl.text
    return out


def _nonempty(pieces: _ObjArray) -> Iterator[tuple[int, str]]:
    """``(index, piece)`` for the non-empty strings of an object array."""
    idx = np.flatnonzero(pieces != "")
    return zip(idx.tolist(), pieces[idx].tolist(), strict=True)


def _sigmoid(x: _FloatArray) -> _FloatArray:
    return 1.0 / (1.0 + np.exp(-x))


def _choose(
    mask: npt.NDArray[np.bool_], choices: Sequence[str], rng: np.random.Generator
) -> _ObjArray:
    """A random element of ``choices`` where ``mask`` holds, ``""`` elsewhere."""
    out = np.full(mask.shape, "", dtype=object)
    n = int(mask.sum())
    if n:
        out[mask] = np.asarray(choices, dtype=object)[rng.integers(0, len(choices), size=n)]
    return out


def _either(
    first: npt.NDArray[np.bool_],
    second: npt.NDArray[np.bool_],
    choices: tuple[Sequence[str], Sequence[str]],
    rng: np.random.Generator,
) -> _ObjArray:
    """``choices[0]`` where ``first``, ``choices[1]`` where ``second`` (and not first)."""
    out = _choose(first, choices[0], rng)
    rest = second & ~first
    out[rest] = _choose(rest, choices[1], rng)[rest]
    return out


def check_writing(
    topics: npt.ArrayLike, writing: npt.ArrayLike
) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.float64]]:
    """``topics`` and ``writing`` as arrays, checked: one topic index into :data:`TOPICS`
    and one row of :data:`WRITING_TRAITS` per prompt.

    Raises
    ------
    ValueError
        Naming the argument, when a shape or an index is wrong.
    """
    topic = np.asarray(topics, dtype=np.intp)
    style = np.asarray(writing, dtype=np.float64)
    n = len(topic)
    if style.shape != (n, len(WRITING_TRAITS)):
        raise ValueError(
            f"Argument 'writing' must have shape ({n}, {len(WRITING_TRAITS)}), not {style.shape}."
        )
    if n and (topic.min() < 0 or topic.max() >= len(TOPICS)):
        raise ValueError(f"Argument 'topics' must hold indices 0..{len(TOPICS) - 1}.")
    return topic, style


def generate_prompts(
    topics: npt.ArrayLike,
    writing: npt.ArrayLike,
    rng: np.random.Generator,
) -> list[str]:
    """Generate one prompt per vote.

    Parameters
    ----------
    topics : array_like of int, shape (n,)
        Index into :data:`TOPICS` of each prompt's topic.
    writing : array_like of float, shape (n, 3)
        The writer's style for each prompt, columns :data:`WRITING_TRAITS`, on a standard
        normal scale (0 is a typical writer, +-2 an extreme one).
    rng : numpy.random.Generator
        Source of all randomness.

    Returns
    -------
    list of str
        The prompts, in the order of ``topics``.
    """
    topic, style = check_writing(topics, writing)
    n = len(topic)
    length, formal, md = style[:, 0], style[:, 1], style[:, 2]

    # The request itself, and up to three context sentences before or after it.
    core = np.empty(n, dtype=object)
    imperative = np.zeros(n, dtype=bool)
    n_context = np.minimum(rng.poisson(np.exp(0.8 * length - 1.0)), 3)
    before, after = np.full((3, n), "", dtype=object), np.full((3, n), "", dtype=object)
    for t, spec in enumerate(_compiled()):
        rows = np.flatnonzero(topic == t)
        if len(rows) == 0:
            continue
        which = rng.integers(0, len(spec.core), size=len(rows))
        core[rows] = _fill(spec.core, which, spec.vocab, rng)
        imperative[rows] = np.array([tpl.imperative for tpl in spec.core])[which]
        k = len(spec.context)
        start = rng.integers(0, k, size=len(rows))
        up_front = rng.random(len(rows)) < 0.5
        for j in range(3):  # consecutive templates from a random start: no repeats
            has = np.flatnonzero(n_context[rows] > j)
            sentence = _fill(spec.context, (start[has] + j) % k, spec.vocab, rng)
            before[j, rows[has[up_front[has]]]] = sentence[up_front[has]]
            after[j, rows[has[~up_front[has]]]] = sentence[~up_front[has]]

    # Decorations, each a Bernoulli draw whose probability follows the writer's style.
    deco, u = DECORATIONS, rng.random((n, 10))
    casual = formal < 0
    greet = _either(
        casual & (u[:, 0] < 0.05 + 0.08 * -formal),
        ~casual & (u[:, 0] < 0.05 + 0.08 * formal),
        (deco["greet_casual"], deco["greet_formal"]),
        rng,
    )
    polite = imperative & (u[:, 1] < _sigmoid(1.4 * np.abs(formal) - 0.8))
    lead = _either(polite & casual, polite, (deco["polite_casual"], deco["polite_formal"]), rng)
    layout = _either(
        u[:, 2] < _sigmoid(1.4 * md - 2.0),
        u[:, 2] > 1.0 - _sigmoid(-1.4 * md - 3.0),
        (deco["format_rich"], ("No bullet points, just plain text.", "No markdown please.")),
        rng,
    )
    size = _either(
        u[:, 3] < _sigmoid(1.3 * length - 1.8),
        u[:, 3] > 1.0 - _sigmoid(-1.3 * length - 1.8),
        (deco["long"], deco["short"]),
        rng,
    )
    thanks = _either(
        casual & (u[:, 4] < _sigmoid(-1.2 * formal - 2.2)),
        ~casual & (u[:, 4] < _sigmoid(1.2 * formal - 1.2)),
        (deco["thanks_casual"], deco["thanks_formal"]),
        rng,
    )
    code = _choose((topic == TOPICS.index("coding")) & (u[:, 5] < 0.3), deco["snippets"], rng)
    fenced = u[:, 6] < _sigmoid(1.5 * md + 0.5)
    lower = u[:, 7] < _sigmoid(-1.6 * formal - 1.2)
    no_stop = u[:, 8] < _sigmoid(-1.6 * formal - 0.4)
    slang = casual & (u[:, 9] < _sigmoid(-2.0 * formal - 2.0))

    # Assemble, touching only the prompts that get each piece (no per-prompt containers).
    prompts: list[str] = core.tolist()
    for i, piece in _nonempty(lead):
        text = piece + prompts[i][0].lower() + prompts[i][1:]
        prompts[i] = text[:-1] + "?" if piece.startswith("Could") else text
    for extra in (before[2], before[1], before[0], greet):
        for i, piece in _nonempty(extra):
            prompts[i] = f"{piece} {prompts[i]}"
    for extra in (after[0], after[1], after[2], layout, size, thanks):
        for i, piece in _nonempty(extra):
            prompts[i] = f"{prompts[i]} {piece}"
    for i in np.flatnonzero(lower).tolist():
        prompts[i] = prompts[i].lower()
    for i in np.flatnonzero(no_stop).tolist():
        if prompts[i][-1] in ".!":
            prompts[i] = prompts[i][:-1]
    for i in np.flatnonzero(slang).tolist():
        text = prompts[i].replace(" you ", " u ").replace("please", "pls")
        prompts[i] = text.replace("Please", "Pls")
    for i, piece in _nonempty(code):
        lang, source = piece.split("\n", 1)
        prompts[i] += f"\n\n```{lang}\n{source}\n```" if fenced[i] else f"\n\n{source}"
    return prompts
