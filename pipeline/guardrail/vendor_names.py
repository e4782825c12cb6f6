"""Names of services whose API keys are pasted beside the service's name ("cloudsmith 9f2c…",
"wandb: 4a1b…", `TOGGL-KEY-…`), written down as facts.

The list follows the providers that public secret scanners (trufflehog's detectors, gitleaks' rule
keywords) recognise by their name alone because the key itself has no prefix. Names that are everyday
English or everyday software words ("front", "float", "column", "host", "redis", "hive") are left out:
beside them a long hex run is far more often a commit or a digest than a key. Names are written
lower-case without joiners; text is compared the same way ("the-odds-api" -> "theoddsapi").
"""

from __future__ import annotations

VENDOR_NAMES: frozenset[str] = frozenset("""
abstractapi abuseipdb accuweather adafruit adafruitio adobeio adzuna aeroworkflow agora airbrake airtable
airvisual aiven alconost alegra aletheiaapi algolia alibaba alienvault allsports amadeus ambee amplitude anypoint
apacta api2cart apideck apiflash apifonica apify apilayer apimatic apiscience apitemplate appcues appfollow
appointedd appsynergy apptivo artifactory artsy asana assemblyai atera atlassian audd auth0 autodesk autoklose
avaza aviationstack axonaut aylien ayrshare bannerbear baremetrics beamer beebole besnappy besttime
betterstack billomat bitbar bitcoinaverage bitfinex bitly bitmex bittrex blazemeter blitapp blocknative blogger
bombbomb boostnote borgbase braintree brandfetch browserstack browshot bscscan buddyns bugherd bugsnag
buildkite bulbul bulksms buttercms caflou calendarific calendly calorieninja campayn canny captaindata
carboninterface cashboard caspio censys centralstationcrm cexio chartmogul checio checklyhq checkvist cicero
circleci clarifai clearbit clickhelp clicksend clickup cliengo clinchpad clockify clockworksms closecrm
cloudconvert cloudelements cloudflare cloudimage cloudmersive cloudplan cloudsmith cloverly cloze clustdoc
codacy codeclimate codecov codemagic codequiry coinapi coinbase coinlayer coinlib commercejs companyhub
confluent contentful convertkit convier countrylayer craftmypdf crowdin cryptocompare currencycloud
currencyfreaks currencylayer currencyscoop currentsapi customerguru customerio d7network dailyco dandelion
dareboost databox databricks datadog debounce deepai deepgram delighted demio deputy detectify
detectlanguage dfuse diffbot diggernaut digitalocean discord disqus docparser documo docusign doppler
dotmailer dovico dronahq droneci dropbox duply dwolla dynalist dyspatch eagleeyenetworks easyinsight
ecostruxureit edamam edenai eightxeight elasticemail enablex endorlabs enigma envoy etherscan ethplorer
everhour exchangerateapi exchangeratesapi exportsdk extractorapi facebook faceplusplus fastforex fastly feedier
fetchrss fibery figma fileio finage financialmodelingprep findl finnhub fixerio flatio fleetbase flickr
flightapi flightlabs flightstats flowflu flutterwave fmfw formbucket formcraft formio formsite foursquare
frameio freshbooks freshdesk fulcrum fullstory fusebill fxmarket geckoboard geoapify geocodify geocodio
geoipifi getemail getgeoapi getgist getsandbox gitter glassnode gocanvas gocardless goodday grafana graphcms
graphhopper groovehq gtmetrix gumroad gyazo happyscribe hellosign helpcrunch helpscout hereapi heroku hiveage
holidayapi holistic honeycomb html2pdf hubspot huggingface hybiscus hypertrack iconfinder iexapis iexcloud
imagekit imagga infura insightly instabot integromat intercom intrinio invoiceocean ipapi ipgeolocation
ipify ipinfodb ipquality ipstack jotform jumpcloud kanbantool karmacrm keenio kickbox klaviyo klipfolio
knapsackpro kontent kraken kucoin kylas languagelayer lastfm launchdarkly leadfeeder lendflow lessannoyingcrm
lexigram linkpreview liveagent livestorm loadmill locationiq loggly loginradius logzio lokalise loyverse
lunchmoney madkudu magicbell mailboxlayer mailerlite mailgun mailjet mailmodo mailsac mandrill mapbox mapquest
marketstack mattermost mavenlink maxmind meaningcloud mediastack meistertask mesibo messagebird metaapi
metrilo mindmeister mixmax mixpanel mockaroo monkeylearn moonclerk moosend moralis mrticktock myfreshworks
myintervals nasdaqdatalink nethunt netlify neutrinoapi newrelic newsapi newscatcher nexmo nftport ngrok
nicereply noticeable nozbe nozbeteams numverify nutritionix nylas oanda okta omnisend onedesk onelogin onepagecrm
onesignal onfleet oopspam openai opencagedata opengraphr openuv openweather optimizely owlbot packagecloud
pagerduty pandadoc pandascore paperform paralleldots parsehub parseur partnerstack pastebin paydirtapp
paymoapp paymongo paypal paystack pdflayer pdfshift peopledatalabs pepipost pinata pipedream pipedrive
pivotaltracker pixabay plaid planetscale planyo plivo podio pollsapi poloniex positionstack postageapp
postbacks posthog postman postmark powrbot prodpad prospectcrm protocolsio proxycrawl pubnub pulumi purestake
pushbullet pusher qase qualaroo qubole quickmetrics rapidapi rawg razorpay reachmail reallysimplesystems
rebrandly rechargepayments refiner rentman repairshopr replicate replyio requestfinance restpack revampcrm
ritekit rocketreach route4me rownd rubygems runrunit runscope salesblink salescookie salesflare salesforce salesmate
satismeter saucelabs scaleway scalr scrapeowl scraperapi scraperbox scrapestack scrapfly scrapingant
scrapingbee screenshotapi screenshotlayer securitytrails segment selectpdf sendbird sendgrid sendinblue
sentry serphouse serpstack sheety sherpadesk shipday shodan shopify shotstack shutterstock signable
signalwire signaturit signupgenius sigopt simfin simplesat simplynoted simvoly sinch sirv siteleaf skrappio
skybiometry smartsheets smartystreets smooch snipcart snyk sonar sonarcloud sonarqube sparkpost speechtextai splunk
spoonacular sportsmonk squareup squarespace sslmate statuscake statuspage statuspal stitchdata stockdata
storecove stormboard stormglass storyblok storychief stripe stytch sugester sumologic supabase supernotes
surveyanyplace surveybot surveysparrow survicate swiftype tailscale tallyfy tatumio taxjar teamgate
teamworkcrm teamworkdesk technicalanalysisapi tefter telnyx terraform testingbot textmagic theoddsapi
thingsboard thinkific thousandeyes ticketmaster tickettailor tiingo timecamp timezoneapi tines tmetric todoist
toggl toggltrack tokeet tomorrowio tomtom tradier transferwise travelpayouts travisci trello twelvedata
twilio twitch tyntec typeform typetalk ubidots uclassify unifyid unplugg unsplash upcdatabase uplead
uploadcare uptimerobot upwave urlscan userflow userstack vatlayer vbout vercel verimail veriphone versioneye
viewneo virustotal visualcrossing voicegain voodoosms vouchery vpnapi vultr vyte walkscore wandb weatherbit
weatherstack webex webflow webscraper webscraping websitepulse wepay whoxy wistia worksnaps workstack
worldcoinindex worldweather wrike yandex yelp youneedabudget yousign zapier zendesk zenkit zenrows zenscrape
zenserp zeplin zerobounce zipapi zipbooks zipcodeapi zipcodebase zohocrm zonkafeedback zulip
""".split())
